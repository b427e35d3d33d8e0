"""The deep-research graph (``deep_research`` in langgraph.json): scope -> search -> fetch ->
3-vote verify -> synthesize -> report.

Shape::

    scope --Send per angle--> angle[search --Send per source--> fetch] --> rank
          --Send per (claim, voter)--> verify --> tally --> synthesize --> report

Each angle runs as its own subgraph, so an angle's fetches start as soon as ITS search is done
(search -> fetch is a pipeline, no barrier across angles); ``rank`` runs once all angles are
done, so verification waits for every extraction. Concurrency is capped by ``max_concurrency``
(default 10) in the run config and, across the parallel angle subgraphs, by one run-wide limiter
of the same size around every agent call. With a checkpointer an interrupted run resumes from its
last checkpoint: finished branches are not called again.

This module is the assembly only: each step is a node function built by ``make_<step>(deps)`` in
its module of ``refgate.nodes.research`` (prompts in ``<step>_prompt.md`` beside it), the state
schemas are ``refgate.nodes.research.state``. Dependencies are resolved lazily at the first node
call (``refgate.nodes.research.deps``), so importing this module (and the checkpointer-less
module-level ``graph``) needs no key, no network and no heavy library.
``configurable`` may carry ``workspace`` (a folder) and ``backend`` (``chat``/``codex``/``agy``).
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from refgate.config import RunContext, Settings
from refgate.models import ModelProvider
from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.core import ResearchLimits
from refgate.nodes.research.deps import PASS_NAME, ResearchDeps
from refgate.nodes.research.extract import make_fetch
from refgate.nodes.research.rank import make_after_rank, make_rank
from refgate.nodes.research.report import make_report
from refgate.nodes.research.scope import after_scope, make_scope
from refgate.nodes.research.search import after_search, make_search
from refgate.nodes.research.state import (
    AngleInput,
    AngleOutput,
    AngleState,
    ResearchInput,
    ResearchState,
)
from refgate.nodes.research.synthesize import make_synthesize
from refgate.nodes.research.tally import after_tally, make_tally
from refgate.nodes.research.verify import make_verify
from refgate.redaction import redacting
from refgate.tools.outbound import OutboundPolicy
from refgate.tools.web_providers import Fetch, WebSearch
from refgate.workspace import Workspace

__all__ = [
    "PASS_NAME",
    "ResearchInput",
    "ResearchState",
    "build_research_graph",
    "compile_research_graph",
    "graph",
    "run_config",
    "stream_research",
]

#: The compiled deep-research graph (its context schema, ``RunContext``, is built at import).
ResearchGraph = CompiledStateGraph[ResearchState, RunContext, ResearchInput, ResearchState]


def build_research_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    provider: ModelProvider | None = None,
    backend: ResearchBackend | None = None,
    web_search: WebSearch | None = None,
    web_fetch: Fetch | None = None,
    settings: Settings | None = None,
    workspace: Workspace | None = None,
    limits: ResearchLimits | None = None,
    outbound: OutboundPolicy | None = None,
) -> ResearchGraph:
    """Compile the deep-research graph.

    ``model`` (a LangChain chat model) or ``backend`` (a ``ResearchBackend``) answer the prompts;
    without either, the foundation's ``ModelProvider`` (``provider``) builds the model from
    ``settings`` on first use. ``web_search`` / ``web_fetch`` default to the workspace's offline
    snapshot (``workspace`` or ``configurable.workspace``). ``outbound`` (an
    ``OutboundPolicy``) is the policy of the run that started this one (its trusted texts and
    workspace data); every query and URL sent is in the report's ``sent``.
    """
    deps = ResearchDeps(
        models=provider or ModelProvider(model),
        settings=settings,
        workspace=workspace,
        backend=backend,
        web_search=web_search,
        web_fetch=web_fetch,
        limits=limits or ResearchLimits(),
        outbound=outbound,
    )
    return compile_research_graph(deps, checkpointer=checkpointer)


def compile_research_graph(
    deps: ResearchDeps, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> ResearchGraph:
    """Compile the deep-research graph around ``deps`` (what its nodes are built with)."""
    angle_builder = StateGraph(AngleState, input_schema=AngleInput, output_schema=AngleOutput)
    angle_builder.add_node("search", redacting(make_search(deps)))
    angle_builder.add_node("fetch", redacting(make_fetch(deps)))
    angle_builder.add_edge(START, "search")
    angle_builder.add_conditional_edges("search", after_search, ["fetch", END])
    angle_builder.add_edge("fetch", END)
    angle_graph = angle_builder.compile(name="research_angle")

    builder = StateGraph(ResearchState, context_schema=RunContext, input_schema=ResearchInput)
    builder.add_node("scope", redacting(make_scope(deps)))
    builder.add_node("angle", angle_graph)
    builder.add_node("rank", redacting(make_rank(deps)))
    builder.add_node("verify", redacting(make_verify(deps)))
    builder.add_node("tally", redacting(make_tally(deps)))
    builder.add_node("synthesize", redacting(make_synthesize(deps)))
    builder.add_node("report", redacting(make_report(deps)))
    builder.add_edge(START, "scope")
    builder.add_conditional_edges("scope", after_scope, ["angle", "report"])
    builder.add_edge("angle", "rank")
    builder.add_conditional_edges("rank", make_after_rank(deps), ["verify", "report"])
    builder.add_edge("verify", "tally")
    builder.add_conditional_edges("tally", after_tally, ["synthesize", "report"])
    builder.add_edge("synthesize", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer, name="deep_research")


def run_config(
    *, thread_id: str | None = None, max_concurrency: int | None = None, **configurable: object
) -> RunnableConfig:
    """A run config with the concurrency cap (default 10) and an optional thread id."""
    conf = {k: v for k, v in configurable.items() if v is not None}
    if thread_id:
        conf["thread_id"] = thread_id
    return {
        "max_concurrency": max_concurrency or ResearchLimits().max_concurrency,
        "configurable": conf,
        "recursion_limit": 50,
    }


def stream_research(
    compiled: ResearchGraph,
    question: str | None,
    config: RunnableConfig,
    on_event: Callable[[dict[str, object]], None] | None = None,
) -> dict[str, object]:
    """Run (``question``) or resume (``None``) and return the final state; progress events go to
    ``on_event`` as they happen."""
    payload: ResearchInput | None = None if question is None else {"question": question}
    final: dict[str, object] = {}
    for ns, mode, chunk in compiled.stream(
        payload, config, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom" and on_event is not None and isinstance(chunk, dict):
            on_event(chunk)
        elif mode == "values" and not ns and isinstance(chunk, dict):
            final = chunk
    return final


#: Checkpointer-less compiled graph for ``langgraph.json`` (``deep_research``).
graph = build_research_graph()

"""Assembly of the workbench graph: one node per pass, the retry route, compile options."""

from __future__ import annotations

from itertools import pairwise

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from refgate.config import (
    BRIEF,
    COMPOSE,
    CRITIQUE,
    DELIVER,
    GATE,
    HARVEST,
    WORK,
    WORKBENCH_PASSES,
    AfterWork,
    RunContext,
    Settings,
)
from refgate.graph.capabilities import register_default_capabilities
from refgate.graph.state import WorkbenchInput, WorkbenchOutput, WorkbenchState
from refgate.models import ModelProvider
from refgate.nodes.brief import make_brief
from refgate.nodes.common import Deps
from refgate.nodes.compose import make_compose
from refgate.nodes.critique import make_critique
from refgate.nodes.deliver import make_deliver
from refgate.nodes.frame import PassNode
from refgate.nodes.gate import GateNode, make_gate
from refgate.nodes.harvest import make_harvest
from refgate.nodes.state import ConfiguredStep
from refgate.nodes.work import make_work
from refgate.redaction import redacting
from refgate.workspace import Workspace, load_workspace

#: The compiled workbench graph.
WorkbenchGraph = CompiledStateGraph[WorkbenchState, RunContext, WorkbenchInput, WorkbenchOutput]


def route_after_work(state: WorkbenchState) -> AfterWork:
    """First WORK goes to CRITIQUE; the GATE retry's WORK goes straight to COMPOSE."""
    return COMPOSE if int(state.get("gate_attempts") or 0) > 0 else CRITIQUE


#: Where a pass that routes by itself may go (the GATE's ``Command``: retry WORK, else HARVEST).
ROUTES: dict[str, tuple[str, ...]] = {GATE: (WORK, HARVEST)}


def pass_nodes(
    deps: Deps,
) -> dict[str, PassNode | GateNode | ConfiguredStep[WorkbenchState, object]]:
    """The node of every workbench pass, by pass name (``WORKBENCH_PASSES``), its errors
    redacted."""
    # a failed node's error is stored in the checkpoints: its secrets are masked first
    return {
        BRIEF: redacting(make_brief(deps)),
        WORK: redacting(make_work(deps)),
        CRITIQUE: redacting(make_critique(deps)),
        COMPOSE: redacting(make_compose(deps)),
        GATE: redacting(make_gate(deps)),
        HARVEST: redacting(make_harvest(deps)),
        DELIVER: redacting(make_deliver(deps)),
    }


def _add_edges(
    builder: StateGraph[WorkbenchState, RunContext, WorkbenchInput, WorkbenchOutput],
) -> None:
    """The passes in ``WORKBENCH_PASSES`` order: START to the first, each to the next, the last
    to END; WORK goes on by ``route_after_work``, a pass in ``ROUTES`` routes itself."""
    builder.add_edge(START, WORKBENCH_PASSES[0])
    for here, there in pairwise(WORKBENCH_PASSES):
        if here == WORK:
            builder.add_conditional_edges(WORK, route_after_work, [CRITIQUE, COMPOSE])
        elif here not in ROUTES:
            builder.add_edge(here, there)
    builder.add_edge(WORKBENCH_PASSES[-1], END)


def build_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    store: BaseStore | None = None,
    workspace: Workspace | str | None = None,
    settings: Settings | None = None,
    audit: bool = False,
) -> WorkbenchGraph:
    """Compile the workbench graph.

    Needs no network, configuration or model to compile: a model is built from settings only
    when a pass runs (unless ``model`` is given, as tests and embedding apps do). ``audit=True``
    makes HARVEST append each run's audit record (the served graphs; ``refgate ask`` and
    ``refgate.api.public`` write their own).
    """
    register_default_capabilities()
    if isinstance(workspace, str):
        workspace = load_workspace(workspace)
    deps = Deps(models=ModelProvider(model), settings=settings, workspace=workspace, audit=audit)
    builder = StateGraph(
        WorkbenchState,
        context_schema=RunContext,
        input_schema=WorkbenchInput,
        output_schema=WorkbenchOutput,
    )
    nodes = pass_nodes(deps)
    for name in WORKBENCH_PASSES:
        builder.add_node(name, nodes[name], destinations=ROUTES.get(name))
    _add_edges(builder)
    return builder.compile(checkpointer=checkpointer, store=store, name="workbench")

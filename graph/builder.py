"""Assembly of the workbench graph: one node per pass, the retry route, compile options."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from refgate.config import (
    BRIEF,
    COMPOSE,
    CRITIQUE,
    DELIVER,
    GATE,
    HARVEST,
    WORK,
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
from refgate.nodes.gate import make_gate
from refgate.nodes.harvest import make_harvest
from refgate.nodes.work import make_work
from refgate.redaction import redacting
from refgate.workspace import Workspace, load_workspace


def route_after_work(state: WorkbenchState) -> AfterWork:
    """First WORK goes to CRITIQUE; the GATE retry's WORK goes straight to COMPOSE."""
    return COMPOSE if int(state.get("gate_attempts") or 0) > 0 else CRITIQUE


def build_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    store: BaseStore | None = None,
    workspace: Workspace | str | None = None,
    settings: Settings | None = None,
    audit: bool = False,
):
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
    # a failed node's error is stored in the checkpoints: its secrets are masked first
    builder.add_node(BRIEF, redacting(make_brief(deps)))
    builder.add_node(WORK, redacting(make_work(deps)))
    builder.add_node(CRITIQUE, redacting(make_critique(deps)))
    builder.add_node(COMPOSE, redacting(make_compose(deps)))
    builder.add_node(GATE, redacting(make_gate(deps)), destinations=(WORK, HARVEST))
    builder.add_node(HARVEST, redacting(make_harvest(deps)))
    builder.add_node(DELIVER, redacting(make_deliver(deps)))
    builder.add_edge(START, BRIEF)
    builder.add_edge(BRIEF, WORK)
    builder.add_conditional_edges(WORK, route_after_work, [CRITIQUE, COMPOSE])
    builder.add_edge(CRITIQUE, COMPOSE)
    builder.add_edge(COMPOSE, GATE)
    builder.add_edge(HARVEST, DELIVER)
    builder.add_edge(DELIVER, END)
    return builder.compile(checkpointer=checkpointer, store=store, name="workbench")

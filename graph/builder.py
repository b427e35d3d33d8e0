"""Assembly of the workbench graph: one node per pass, the retry route, compile options."""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from refgate.config import RunContext, Settings
from refgate.graph.state import WorkbenchInput, WorkbenchOutput, WorkbenchState
from refgate.models import ModelProvider
from refgate.nodes.brief import make_brief
from refgate.nodes.common import Deps
from refgate.nodes.compose import make_compose
from refgate.nodes.critique import make_critique
from refgate.nodes.deliver import make_deliver
from refgate.nodes.gate.node import make_gate
from refgate.nodes.harvest import make_harvest
from refgate.nodes.work import make_work
from refgate.redaction import redacting
from refgate.workspace import Workspace, load_workspace


def route_after_work(state: WorkbenchState) -> Literal["critique", "compose"]:
    """First WORK goes to CRITIQUE; the GATE retry's WORK goes straight to COMPOSE."""
    return "compose" if int(state.get("gate_attempts") or 0) > 0 else "critique"


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
    builder.add_node("brief", redacting(make_brief(deps)))
    builder.add_node("work", redacting(make_work(deps)))
    builder.add_node("critique", redacting(make_critique(deps)))
    builder.add_node("compose", redacting(make_compose(deps)))
    builder.add_node("gate", redacting(make_gate(deps)), destinations=("work", "harvest"))
    builder.add_node("harvest", redacting(make_harvest(deps)))
    builder.add_node("deliver", redacting(make_deliver(deps)))
    builder.add_edge(START, "brief")
    builder.add_edge("brief", "work")
    builder.add_conditional_edges("work", route_after_work, ["critique", "compose"])
    builder.add_edge("critique", "compose")
    builder.add_edge("compose", "gate")
    builder.add_edge("harvest", "deliver")
    builder.add_edge("deliver", END)
    return builder.compile(checkpointer=checkpointer, store=store, name="workbench")

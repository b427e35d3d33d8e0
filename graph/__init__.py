"""The workbench graph: BRIEF -> WORK -> CRITIQUE -> COMPOSE -> GATE (-> WORK once) -> HARVEST."""

# The engine capabilities register themselves on import; every run goes through this package.
import refgate.graph.research_capability  # noqa: F401
import refgate.retrieval.capability  # noqa: F401
import refgate.tools.capabilities  # noqa: F401
from refgate.graph.builder import build_graph, route_after_work

__all__ = ["build_graph", "route_after_work"]

"""The workbench graph: BRIEF -> WORK -> CRITIQUE -> COMPOSE -> GATE (-> WORK once) -> HARVEST."""

from refgate.graph.builder import build_graph, route_after_work

__all__ = ["build_graph", "route_after_work"]

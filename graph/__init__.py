"""The workbench graph: BRIEF -> WORK -> CRITIQUE -> COMPOSE -> GATE (-> WORK once) -> HARVEST."""

from refgate.graph.builder import PASS_ORDER, build_graph, route_after_work

__all__ = ["PASS_ORDER", "build_graph", "route_after_work"]

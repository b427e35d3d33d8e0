"""The workbench graph: BRIEF -> WORK -> CRITIQUE -> COMPOSE -> GATE (-> WORK once) -> HARVEST."""

from refgate.catalog.capabilities import register
from refgate.graph import research_capability
from refgate.graph.builder import build_graph, route_after_work
from refgate.retrieval import capability as document_capabilities

# Every run goes through this package: it registers the documents' and the graph's own
# capabilities (the tools layer's registry, which the passes load, registers the dataset ones).
register(document_capabilities.CAPABILITIES)
register(research_capability.CAPABILITIES)

__all__ = ["build_graph", "route_after_work"]

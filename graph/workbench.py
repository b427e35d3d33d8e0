"""The module-level, checkpointer-less workbench graph that ``langgraph.json`` serves.

``langgraph dev`` and LangGraph Server attach their own checkpointer and store; the model comes
from settings (``REFGATE_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``) when a run starts.
Each run appends its audit record (the workspace's ``audit.jsonl``, else the store), so
``refgate audit`` and ``refgate review`` see served runs.
"""

from refgate.graph.builder import build_graph

graph = build_graph(audit=True)

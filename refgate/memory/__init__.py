"""What a workspace keeps across runs.

- ``decisions``: decisions remembered by HARVEST and recalled by BRIEF (a LangGraph Store);
- ``store``: the store's embedding index (one shape for every front end);
- ``persistence``: where checkpoints and the store live (SQLite or PostgreSQL);
- ``embeddings``: the embedders (MiniLM offline, hashing, OpenAI) shared with retrieval;
- ``audit``: the append-only run record (``.refgate/audit.jsonl``).
"""

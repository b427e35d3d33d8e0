"""The document index in PostgreSQL with pgvector: shared by every process and machine that
reaches the database, updated while it is read, filtered by company and date inside the index.

``write_index(dsn, documents, embeddings)`` builds or updates it (``writer.py``);
``PgIndex(dsn)`` searches it as ``DocumentIndex`` searches a FAISS folder (``index.py``);
``migrate.py`` copies a FAISS folder in without re-embedding. ``refgate.retrieval.index``'s
``open_search_index`` picks the backend a workspace configures (``[index] backend``).
"""

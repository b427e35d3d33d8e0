"""Fixtures for the retrieval tests: the FOMC statements and one MiniLM instance per session."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOMC_DIR = REPO / "examples" / "us-macro" / "documents"
MINUTES_DIR = REPO / "examples" / "us-macro" / "web" / "minutes"


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 (offline), loaded once for the session."""
    from refgate.memory.embeddings import MiniLMEmbeddings

    emb = MiniLMEmbeddings()
    emb.embed_query("warm up")  # loads the model
    return emb


@pytest.fixture(scope="session")
def fomc_docs():
    from refgate.retrieval.documents import load_documents

    return load_documents(FOMC_DIR, date_from_filename="%Y%m%d", entity="FOMC")

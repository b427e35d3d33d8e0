"""A search result as plain data: ``HitRecord`` is ``SearchHit``'s fields."""

from __future__ import annotations

from dataclasses import fields

from refgate.tools.web_providers import HitRecord, SearchHit


def test_a_search_hit_becomes_its_record() -> None:
    assert [f.name for f in fields(SearchHit)] == list(HitRecord.__annotations__)
    hit = SearchHit("https://example.org/a", "A page", "the snippet", "2024-01-02", 0.5)
    assert hit.as_dict() == {
        "url": "https://example.org/a",
        "title": "A page",
        "snippet": "the snippet",
        "date": "2024-01-02",
        "score": 0.5,
    }

"""One JSON extractor for model text (nodes/parsing.py): the passes and the research backends
use the same function, and the merged behaviour keeps what each had."""

from __future__ import annotations

from refgate.nodes import parsing
from refgate.nodes.parsing import extract_json, parse_json_object, parse_string_list
from refgate.nodes.research import backends


def test_the_research_backends_use_the_passes_extractor():
    assert backends.parse_json_object is parsing.parse_json_object


def test_first_object_in_prose_with_several():
    # The passes' old extractor took first "{" to last "}" and found nothing here.
    assert parse_json_object('plan: {"skills": ["a"]} and later {"x": 1}') == {"skills": ["a"]}
    assert parse_json_object('a {broken} then {"ok": 1}') == {"ok": 1}
    assert parse_json_object('```json\n{"lens": "macro"}\n```') == {"lens": "macro"}
    assert parse_json_object('  {"a": {"b": [1, 2]}}  ') == {"a": {"b": [1, 2]}}
    assert parse_json_object("no json") is None
    assert parse_json_object("") is None and parse_json_object(None) is None


def test_string_lists_fenced_inline_or_as_lines():
    assert parse_string_list('```json\n["units?", "freshness"]\n```') == ["units?", "freshness"]
    assert parse_string_list('Points: ["a", " b ", ""] done') == ["a", "b"]
    assert parse_string_list("[]") == []
    # Bracketed citations in prose are not a list.
    assert parse_string_list("- see [1] first\n- then [2]") == ["see [1] first", "then [2]"]
    assert parse_string_list("one\n\ntwo") == ["one", "two"]


def test_kind_is_respected():
    assert extract_json('[{"a": 1}] then {"b": 2}', dict) == {"a": 1}
    assert extract_json('{"a": ["x"]}', list) == ["x"]
    assert extract_json('{"a": 1}', list) is None

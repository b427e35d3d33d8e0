"""One sentence splitter (refgate.text): the GATE, the chunker, research and the web snapshot cut
prose the same way, and "Mr." stays in its sentence everywhere."""

from __future__ import annotations

import pytest

from refgate import text
from refgate.gate.markdown import _sentences as gate_sentences
from refgate.nodes.research import core as research_core
from refgate.retrieval.chunking import split_sentences as chunk_spans
from refgate.text import sentence_spans, split_sentences
from refgate.tools import web_providers

PROSE = "Mr. Bernanke spoke in the U.S. today. Rates rose 0.25 percent. Then J. Yellen left."
EXPECTED = [
    "Mr. Bernanke spoke in the U.S. today.",
    "Rates rose 0.25 percent.",
    "Then J. Yellen left.",
]


def test_every_caller_uses_the_one_splitter():
    assert research_core.split_sentences is text.split_sentences
    assert web_providers.split_sentences is text.split_sentences
    assert chunk_spans(PROSE) == sentence_spans(PROSE)


@pytest.mark.parametrize(
    "cut",
    [
        lambda t: split_sentences(t),
        lambda t: [t[a:b].strip() for a, b in chunk_spans(t)],
        lambda t: [s.strip() for s in gate_sentences(t, set())],
    ],
    ids=["research-and-web", "chunker", "gate"],
)
def test_mr_stays_in_its_sentence_everywhere(cut):
    assert cut(PROSE) == EXPECTED
    assert cut("Growth slowed, said Dr. Smith of Acme Corp. in Jan. 2009. It recovered.") == [
        "Growth slowed, said Dr. Smith of Acme Corp. in Jan. 2009.",
        "It recovered.",
    ]


def test_boundaries():
    assert split_sentences("금리를 동결했다. 물가는 안정되었다.") == [
        "금리를 동결했다.",
        "물가는 안정되었다.",
    ]
    assert split_sentences("It rose approx. the same. Next one!  And?") == [
        "It rose approx. the same.",
        "Next one!",
        "And?",
    ]
    assert split_sentences("Smith et al. Found it. E.g. this one.") == [
        "Smith et al. Found it.",
        "E.g. this one.",
    ]
    assert split_sentences("") == [] and split_sentences("   ") == []


def test_spans_tile_the_range():
    t = "One. Two.  Three"
    spans = sentence_spans(t)
    assert spans == [(0, 5), (5, 11), (11, 16)]
    assert "".join(t[a:b] for a, b in spans) == t
    assert sentence_spans(t, 5, 11) == [(5, 11)]

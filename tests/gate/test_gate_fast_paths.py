"""The GATE's fast paths give what the general paths give.

Each shortcut taken for speed (a literal pre-search before the rank scan, plain numeric table cells
read directly, a linear look-up for refs with few numbers, scanning all units scanner by scanner,
paragraphs cut into sentences after the line scan) is checked here against the path it skips.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from refgate.gate import check_answer, markdown, matching, mentions, ranking
from refgate.gate.index import build_index
from refgate.gate.markdown import split_units
from refgate.gate.numbers import Num, span_test
from refgate.refs import Ref

RANK_PIECES = [
    "top", "top 3", "top-five", "bottom 10", "first largest", "second place", "third-highest",
    "largest", "Biggest", "highest", "lowest", "smallest", "greatest", "fewest", "ranked",
    "ranks", "ranking", "#1", "# 2", "No. 3", "no.4", "number one", "number two", "상위", "상위 5",
    "하위 3개", "최대", "최고", "최저", "최소", "가장", "stop", "atop", "laptop", "#", "no.",
    "numbers", "firstly", "raNk", "TOP 10", " ", " ", "the", "a", "x", "1", "2", "3위", ",", ".",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(RANK_PIECES), min_size=1, max_size=12), st.booleans())
def test_rank_hint_precedes_every_rank_match(pieces, glue):
    text = ("" if glue else " ").join(pieces)
    low = text.lower()
    if ranking._RANK.search(low):
        assert ranking._RANK_HINT.search(low), text
    # ranks with and without the pre-search agree.
    full = []
    for m in ranking._RANK.finditer(low):
        s = m.start()
        glued = s and low[s - 1].isascii() and (low[s - 1].isalnum() or low[s - 1] == "_")
        if glued and m.group()[0].isascii() and m.group()[0].isalpha():
            continue
        full.append((s, m.end(), text[s : m.end()]))
    got = [r for r in ranking.ranks(text, low) if ranking._RANK.match(low, r[0])]
    assert got == full


def _mention_tuple(m):
    num = m.num
    return (m.kind, m.text, m.keys, None if num is None else tuple(getattr(num, f) for f in (
        "text", "start", "end", "shown", "step", "scale", "has_scale", "kind", "signed", "currency"
    )))  # fmt: skip


HEADERS = [
    "",
    "Revenue (USD million)",
    "Margin (%)",
    "Spread (bp)",
    "Cover (x)",
    "매출 (억원)",
    "Value",
]


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.integers(0, 10**9).map(str),
        st.integers(0, 10**9).map(lambda v: f"{v:,}"),
        st.floats(0, 1e7, allow_nan=False).map(lambda v: f"{v:,.2f}"),
        st.floats(0, 1e4, allow_nan=False).map(lambda v: f"{v:.3f}"),
        st.integers(0, 999).map(lambda v: f".{v}"),
        st.sampled_from(["1999", "2019", "2019.5", "20", "19.5", "2,019", "0", "007"]),
    ),
    st.sampled_from(HEADERS),
)
def test_plain_cell_reads_as_the_full_scan_does(text, header):
    full = [_mention_tuple(m) for m in mentions._mentions_batch([text], [header])[0]]
    fast = mentions._plain_cell(text, header)
    if fast is not None:
        assert [_mention_tuple(fast)] == full
    else:
        assert text.startswith(("19", "20")) or mentions._PLAIN_CELL.fullmatch(text) is None


SENTENCES = [
    "In Q3 2015 revenue was $1,234.5 million at a 12.3% margin.",
    "2018년 2분기 매출은 66,575억 7천만 원, 이익률은 22.78%였다.",
    "As of December 16, 2008 the target range was 0 to 1/4 percent.",
    "The largest three were (12.3) and -4.5% and 2.3x, top 3 by revenue.",
    "Revenue reached $4.5bn in FY2023, 45 bp above the first quarter.",
    "no numbers here at all",
    "1위 기업은 3억 2천만 원, 기준 2024년 3월 현재",
]


@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=6))
def test_batch_scan_equals_one_text_at_a_time(texts):
    batch = mentions._mentions_batch(texts)
    single = [mentions._mentions_batch([t])[0] for t in texts]
    assert [[_mention_tuple(m) for m in ms] for ms in batch] == [
        [_mention_tuple(m) for m in ms] for ms in single
    ]


values = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)),
    st.integers(-5000, 5000),
    st.sampled_from([12.3, -12.3, 12.34, 12.0, 0.123, 1230.0, 0.0]),
)
units = st.sampled_from(["USD", "%", "ratio", "bp", "x", "KRW", "", "USD millions", "thousand"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(values, units), min_size=1, max_size=16),
    st.sampled_from(
        [
            "12.3",
            "12",
            "-12.3",
            "12.3%",
            "$12.3",
            "12.3 million",
            "1.23 thousand",
            "45 bp",
            "2.3x",
            "1,230",
            "0.1",
            "(12.3)",
            "₩12",
            "0",
            "5,000",
            "12.34%",
        ]  # fmt: skip
    ),
)
def test_linear_lookup_equals_sorted_arrays(vals, claim):
    payload = {
        "values": {f"v{i}": v for i, (v, _) in enumerate(vals)},
        "units": {f"v{i}": u for i, (_, u) in enumerate(vals)},
    }
    ref = Ref(id="val_00000000aa", kind="valueRef", payload=payload)
    nums = [m.num for m in mentions._mentions_batch([claim])[0] if m.num is not None]
    assert nums
    for num in nums:
        linear = matching.match_number(num, [build_index(ref)])
        saved = matching._LINEAR_MAX
        matching._LINEAR_MAX = -1  # force the sorted arrays
        try:
            arrays = matching.match_number(num, [build_index(ref)])
        finally:
            matching._LINEAR_MAX = saved
        assert linear == arrays


def test_num_is_the_scanner_record():
    # _plain_cell builds Num positionally: guard the field order it relies on.
    assert [f for f in Num.__dataclass_fields__] == [
        "text", "start", "end", "shown", "step", "scale", "has_scale", "kind", "signed", "currency"
    ]  # fmt: skip


def test_units_and_citations_keep_answer_order_across_blocks():
    answer = "\n".join(
        [
            "Revenue was 12.3 [val_aaaaaaaaa1]. Costs were 4.5 [val_ffff1].",
            "# Heading 7 [val_ffff2]",
            "",
            "| Company | Revenue |",
            "|---|---|",
            "| A | 1.0 | [val_ffff3]",
            "",
            "- item with 9 [val_ffff4]",
            "Closing line 3 [val_ffff5].",
        ]
    )
    units, cites = split_units(answer, {"val_aaaaaaaaa1": None})
    assert [(u.kind, u.line) for u in units] == [
        ("sentence", 0), ("sentence", 0), ("heading", 1), ("row", 5), ("item", 7), ("sentence", 8)
    ]  # fmt: skip
    assert [c for c, _ in cites] == [
        "val_aaaaaaaaa1", "val_ffff1", "val_ffff2", "val_ffff3", "val_ffff4", "val_ffff5"
    ]  # fmt: skip
    report = check_answer(
        answer, [Ref(id="val_aaaaaaaaa1", kind="valueRef", payload={"values": {"v": 12.3}})]
    )
    fakes = [i.ref_ids[0] for i in report.issues if i.code == "fake_ref_token"]
    assert fakes == ["val_ffff1", "val_ffff2", "val_ffff3", "val_ffff4", "val_ffff5"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 40)), max_size=40),
    st.lists(st.integers(-5, 350), min_size=1, max_size=30),
)
def test_span_test_equals_the_linear_scan(raw, positions):
    spans = [(a, a + w) for a, w in raw]
    inside = span_test(spans)
    for s in positions:
        assert inside(s) == any(a <= s < b for a, b in spans)


#: The scrub pattern as a single regular expression, HTML comments included (quadratic on many
#: unclosed "<!--", hence replaced by ``_noise_spans``): the reference for what is blanked.
_REFERENCE_NOISE = re.compile(
    r"`[^`\n]*`|<!--.*?-->|https?://\S+|www\.\S+|\[\^[^\]]{1,200}\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|<[^>\n]{1,80}>",
    re.S,
)
NOISE_PIECES = ["<!--", "-->", "<", ">", "`", "http://x", "www.z", "[^", "]", "[^1]", "¹", " ",
                "a", "\n", "-", "<b>", "<!-->", "<!---->", "`c`"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(NOISE_PIECES), min_size=1, max_size=30))
def test_scrub_blanks_what_the_single_pattern_blanks(pieces):
    text = "".join(pieces)
    expected = _REFERENCE_NOISE.sub(lambda m: " " * len(m.group()), text)
    assert markdown._scrub(text) == expected


# Indexes and the binder's readings of a ref's places are kept across calls (``index.INDEXES``,
# ``RefIndex.readings``): what is kept must follow the payload, the ref kind, the ref itself and
# the vocabulary, never an id or an object seen before.


def _val(rid: str, values: dict[str, float]) -> Ref:
    return Ref(id=rid, kind="valueRef", payload={"values": values, "units": {"u": "%"}})


def test_a_kept_index_follows_the_payload_not_the_id():
    claim = "The unemployment rate was 5.0% [val_00000000ab]."
    assert check_answer(claim, [_val("val_00000000ab", {"unemployment_rate": 5.0})]).passed
    # the same id with another payload: its own value, not the kept one
    other = check_answer(claim, [_val("val_00000000ab", {"unemployment_rate": 6.0})])
    assert not other.passed
    # a payload changed in place after a check is indexed again
    ref = _val("val_00000000ab", {"unemployment_rate": 6.0})
    assert not check_answer(claim, [ref]).passed
    ref.payload["values"]["unemployment_rate"] = 5.0
    assert check_answer(claim, [ref]).passed


def test_a_kept_index_follows_the_kind():
    payload = {"text": "The survey was published in 2019."}
    claim = "The survey was published in 2019 [doc_00000000ab]."
    assert check_answer(claim, [Ref(id="doc_00000000ab", kind="docRef", payload=payload)]).passed
    date_ref = Ref(id="doc_00000000ab", kind="dateRef", payload=payload)
    assert not check_answer(claim, [date_ref]).passed  # a dateRef's text states no period


def test_refs_with_one_payload_keep_their_own_id_and_authority():
    payload = {"excerpt": "Revenue was 5,000 in 2019."}
    doc = Ref(id="doc_00000000ab", kind="docRef", payload=payload)
    page = Ref(id="doc_00000000cd", kind="docRef", payload=payload, authority="secondary")
    doc_report = check_answer("Revenue was 5,000 in 2019 [doc_00000000ab].", [doc, page])
    page_report = check_answer("Revenue was 5,000 in 2019 [doc_00000000cd].", [doc, page])
    assert doc_report.passed and [i.code for i in doc_report.issues] == []
    assert [m.ref_id for m in doc_report.claims[0].mentions[0].matches] == ["doc_00000000ab"]
    assert [m.ref_id for m in page_report.claims[0].mentions[0].matches] == ["doc_00000000cd"]
    assert [i.code for i in page_report.issues] == ["external_only_numeric"]


def test_kept_readings_follow_the_vocabulary():
    ref = _val("val_00000000ab", {"series_a": 5.0})
    claim = "The unemployment rate was 5% [val_00000000ab]."
    vocabulary = {"series_a": "unemployment rate, seasonally adjusted"}
    for _ in range(2):
        assert not check_answer(claim, [ref]).passed
        assert check_answer(claim, [ref], vocabulary=vocabulary).passed
        assert not check_answer(claim, [ref], vocabulary={"series_a": "gdp"}).passed


def test_checks_are_the_same_with_and_without_kept_indexes():
    from refgate.gate import binding, index

    table = Ref(
        id="tbl_00000000ab",
        kind="tableRef",
        payload={
            "columns": ["item", "2019", "2018"],
            "rows": [
                ["Revenue", 4000, 3500],
                ["Cost of sales", 5000, 2900],
                ["Employees", 120, 110],
            ],
            "meta": {"scale": "thousand", "unit": "USD"},
        },
    )
    claims = [
        "Revenue was $4,000 thousand in 2019 [tbl_00000000ab].",
        "Revenue was $5,000 thousand in 2019 [tbl_00000000ab].",
        "Revenue was $3,500 thousand in 2019 [tbl_00000000ab].",
        "The company had 120 employees in 2018 [tbl_00000000ab].",
        "Cost of sales was 2,900 in 2018 and revenue 3,500 [tbl_00000000ab].",
    ]
    warm = [check_answer(c, [table]).to_dict() for c in claims for _ in range(2)]
    cold = []
    for c in claims:
        for _ in range(2):
            index.INDEXES.cache_clear()
            binding._vocabulary_words.cache_clear()
            cold.append(check_answer(c, [table]).to_dict())
    assert warm == cold
    assert [r["passed"] for r in warm[::2]] == [True, False, False, False, True]


def test_the_index_cache_keeps_its_bounds():
    from refgate.gate.index import IndexCache

    cache = IndexCache(max_entries=2, max_bytes=64 * 400)
    refs = [_val(f"val_00000000a{i}", {"unemployment_rate": float(i)}) for i in range(4)]
    first = [cache.index(ref) for ref in refs]
    assert [i.ref for i in first] == refs
    assert len(cache._by_key) == 2
    # the two most recently used are kept; the first two are indexed afresh
    kept = [cache.index(refs[i]).items is first[i].items for i in (3, 2, 1, 0)]
    assert kept == [True, True, False, False]
    big = Ref(id="doc_00000000ab", kind="docRef", payload={"text": "Revenue was 5. " * 40})
    assert cache.index(big).items is not cache.index(big).items  # too large to keep
    assert cache._bytes <= 64 * 400


# A claim's whole words (its fallback, and what it passes to the next claim) are read only when
# a clause's words do not name a place (``quantity.ClaimWords``): the same words as reading
# them for every claim.

CLAIM_PIECES = ["Revenue", "grew", "5", "to", "the", "margin", "was", "-", "매출은", "1.5", " "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CLAIM_PIECES), max_size=5), min_size=1, max_size=12))
def test_claim_words_read_late_equal_words_read_at_once(claims):
    from refgate.gate.quantity import ClaimWords
    from refgate.gate.words import metric_words

    texts = [" ".join(pieces) for pieces in claims]
    lazy = []
    previous = None
    for text in texts:
        previous = ClaimWords(text, previous)
        lazy.append(previous)
    eager = []
    eager_previous: frozenset[str] = frozenset()
    for text in texts:
        own = metric_words(text)
        eager.append((own | eager_previous, own or eager_previous))
        eager_previous = own or eager_previous
    # read from the last claim back: the walk over claims not read yet
    for claim, (fallback, after) in reversed(list(zip(lazy, eager, strict=True))):
        assert claim.after() == after
        assert claim.fallback() == fallback


def test_a_long_run_of_claims_without_words_passes_words_on():
    from refgate.gate.quantity import ClaimWords

    claim = ClaimWords("Revenue grew", None)
    for _ in range(50_000):
        claim = ClaimWords("5", claim)
    assert claim.after() == claim.fallback() == {"revenue", "grow"}

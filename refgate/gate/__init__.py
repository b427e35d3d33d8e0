"""The GATE: bind every claim of an answer to the refs it cites and check the values.

Pure, deterministic, no LLM, no I/O. ``check_answer(answer, refs)`` returns a ``GateReport``
(``passed``, ``issues``, ``claims``, ``to_dict()``; types in ``findings.py``);
``unmet_section(report)`` renders the short "Not verified" section appended after a second block.
The GATE pass of the workbench graph (``refgate.nodes.gate``: ``make_gate``) runs it and routes.

The stages (``STAGES``, in order; a module imports only modules listed before it)
    base        helpers every stage reads: number, date, unit and word forms, the names with
                numbers, the findings (``findings``), the ledger (``evidence.read_ledger``)
    1 claims    the answer split into claims with their citations (``markdown.Claims``)
    2 mentions  each claim's numbers, dates, periods, units and rankings
                (``mentions.ClaimMentions``; ``quantity``: what a number measures)
    3 index     an index of each cited ref: its numbers, dates, labels and their places
                (``cited.index_cited``, ``index.build_index``, ``lookup.RefIndex``)
    4 bind      each mention bound to a place of the refs its claim cites
                (``claim_checks.bind_claims`` -> ``Bound``; ``binding``, ``matching``)
    5 verdict   the ledger, ranking and coverage rules over the bound claims
                (``verdict.give_verdict`` -> ``findings.GateReport``)
    run         ``check.check_answer`` runs the ledger and stages 1 to 5
    review      the pass's look after the verdict: containment and conclusions
                (``containment.review``)

What a claim is
    A sentence, list item, heading or markdown table row (header and separator excluded) that
    states a number, a date/period or a ranking. Code blocks, inline code, URLs, ref ids (their hex
    digits), list markers, heading numbering, footnote markers (``[^1]``, ``[1]``, superscripts)
    and a "Not verified" section are not claims; years inside dates are date parts. Citations are
    ``[id]``, ``[a][b]`` and ``[a, b]``; all numbers, dates and rankings of a claim must be
    supported by the refs that claim cites (a table row with no citation of its own inherits the
    header row's, else those of the line above the table).

Support rule for numbers (no arithmetic)
    1. Normalise: thousands separators dropped; ``-``, ``−``, ``+`` and ``(12.3)`` (negative) are
       signs. An explicitly signed claim must match the sign of the ref value; an unsigned claim
       matches either sign, because prose carries the sign in words ("a loss of 12.3").
    2. Scale: a claim's scale words (thousand/million/billion/trillion, k/m/mn/bn/tn glued to the
       number, 천/만/억/조 and Korean compounds such as ``3억 2천만``) multiply it; a ref's value is
       multiplied by its ``scale`` field or the scale in its unit ("USD millions", "백만원").
       A claim with a scale word is compared in absolute terms: "$4.5 billion" matches a ref value
       4,512 with scale million, and "4.5 million" never matches it. A claim with no scale word
       matches the ref's value either as displayed in the ref's own scale (1,496.5 in a table "in
       millions") or in absolute terms.
    3. Percent vs ratio: "5%" (also percent, pct, %p, percentage points) is 5 in a ref whose unit is
       %/percent, 0.05 in one whose unit is ratio, and 5 in a unitless ref; "45 bp" is 0.45 percent
       points; "2.3x" / "2.3 times" matches a multiple (unit x/times) or unitless value. A percent
       claim never matches a ref value in a currency or count unit. A currency shown in the claim
       ($, USD, 원, ...) must not contradict a currency in the ref's unit.
    4. Precision: the ref value, expressed in the claim's scale, is rounded to the places the claim
       shows (decimals; for Korean compounds the last unit written). Support means
       ``|ref - claim| <= half a unit of the claim's last shown place`` (ties either way), so a ref
       value 12.347 supports "12.3", "12.35" and "12" but not "12.4" or "12.34". Values are
       compared as binary floats with a relative slack of 1e-14, exact for numbers of up to about
       12 significant digits.
    5. Which refs count: values of valueRefs, numeric cells of tableRefs (strings such as
       "$ 1,452.4", "(12.3)", "12.5%" are parsed; table ``meta.scale``/``units`` apply), and
       numbers in webRef/docRef text (excerpt/quote/text/snippet/content/body). Authority: a
       number supported only by secondary refs (``Ref.is_secondary``: webRefs, web pages read as
       files, model output) is ``external_only_numeric``, blocking by default; a skill listing
       "secondaryAllowed" or ``secondary_numbers="warn"`` makes it a warning, a skill listing
       "primarySource" keeps it blocking. Workspace documents are untrusted text yet primary
       evidence for their own numbers. executionRefs, skillRefs and other kinds support no
       number.
    6. No arithmetic: a difference, ratio, growth rate or share is supported only when it was
       emitted as its own value.

Dates
    2008-12-16, 2008/12/16, December 16, 2008, 16 December 2008, Dec. 16, December 2008, 2008-12,
    2008Q4, Q4 2008, 4Q08, fourth quarter of 2008, H1 2024, first half of 2024, FY2023, FY23,
    fiscal 2023, years and year ranges (2017-2019), and Korean 2024년 3월 16일, 2024년 3월,
    2024년 3분기, 2024년 상반기, 2024년. A date claim is supported when a cited ref carries it at the
    same or finer granularity (payload date/period/asOf/label fields, period-like table columns,
    date-like column headers, dates in external text); an "as of" with no readable date needs a
    cited ref carrying some date. A bare 1900-2099 is read as a year; when no cited ref carries
    that year but one holds the number (a count of 1,900 written "1900"), it is supported as that
    number.

Rankings
    largest/highest/lowest/..., top N, #1, No. 1, 2nd largest, ranked first, N위, 상위, 하위, 최대,
    최고, 최저, 가장. A ranking needs a cited tableRef whose rows (or column headers) contain the
    ranked items (a row label named in the claim, or a value of the claim found in that table), and
    a ranking answer must render a markdown evidence table with a rank column. A ranking answer
    (ranking prose or a rank table) must also state its frame (``missing_ranking_frame``): its
    universe ("among the S&P 500 constituents", "of all quarters in the dataset", an index name),
    its metric ("ranked by market capitalization", or a named value column of the table) and, in
    the evidence table, the raw value.

Documented behaviour
    A claim cited only to documentation refs (apiRef: a capability's signature and docstring;
    skillRef: a skill's procedure) that names what they document (the capability, one of its
    parameters, the skill) and holds no proper name absent from that documentation is about a
    documented behaviour: its ranking words ("ranks", "largest") are supported when the
    documentation states a ranking, its numbers ("n=10", "1 to 100") when the documentation states
    them. Any other claim cited to documentation is a data claim, which documentation cannot
    support (its example dates support nothing either).

Empty evidence
    An answer with a data claim (a number, date or ranking not about documented behaviour nor
    cited only to docRefs/webRefs) blocks with ``emit_result_missing`` when the ledger holds no
    emitted result: no valueRef, dateRef or tableRef, InspectDataset's schema table
    (``meta.role == "schema"``) excluded.

Names with numbers
    "S&P 500", "FTSE 100", "Nasdaq-100", "Russell 2000", "KOSPI 200", "Nikkei 225", "Fortune 500",
    "Form 10-K", "Rule 10b-5", "Section 16", ... (``refgate.gate.numbered_names.DEFAULT_NAMES``, extended
    by a workspace's ``[gate] names`` and ``check_answer(names=...)``) are names, not claims; a name
    matches only as written, so a number beside or glued to it ("S&P 5000", "FTSE 100,000") stays
    a claim.
"""

from .check import CheckRefused, check_alone, check_answer, check_input_error
from .findings import ISSUE_CODES, ClaimCheck, GateIssue, GateReport, Match, MentionCheck
from .verdict import unmet_section

#: The GATE's modules by stage, in the order data moves (tests/foundation/test_gate_stages.py: a
#: module imports only modules listed before it).
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "korean",
            "units",
            "numbers",
            "dates",
            "words",
            "numbered_names",
            "names",
            "collection",
            "findings",
            "evidence",
        ),
    ),
    ("claims", ("markdown",)),
    ("mentions", ("ranking", "mentions", "quantity")),
    ("index", ("text_tables", "headers", "lookup", "index", "row_names", "documented", "cited")),
    ("bind", ("matching", "binding", "claim_checks")),
    ("verdict", ("coverage", "verdict")),
    ("run", ("check",)),
    ("review", ("conclusions", "containment")),
)

__all__ = [
    "ISSUE_CODES",
    "ClaimCheck",
    "GateIssue",
    "GateReport",
    "Match",
    "MentionCheck",
    "STAGES",
    "check_answer",
    "check_input_error",
    "check_alone",
    "CheckRefused",
    "unmet_section",
]

"""Data cells are data: a dataset's text cell that reads like prose is third parties' text (a
comment, a scraped note, a vendor's remark), not the workspace's own label. It is inspected
like a document, fenced as data when a model is shown it, and a turn that saw it records it as
``influenced_by`` (``cell text``). Numbers in cells stay primary evidence: only text is judged.

``is_text_cell``: a string cell with an injection or Unicode signal, with at least
``PROSE_WORDS`` words, or with at least three words and clause punctuation (a colon, semicolon,
question or exclamation mark, or a full stop inside it). Short labels, names, codes, dates and
URLs are not prose; "Errata: column tbilrate is mislabeled; use the infl column" is.
"""

from __future__ import annotations

import re

#: Words that make a cell prose whatever its punctuation (row labels of financial tables run to
#: six or seven: "Net cash provided by operating activities").
PROSE_WORDS = 9
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.I)
_WORD = re.compile(r"[^\W\d_]{2,}")
_CLAUSE = re.compile(r"[:;!?？！；：]|\b[a-z]{3,}\.\s+[A-Z]|[.。]\s+\S*[가-힣]|다\.|요\.")


def is_text_cell(value: object) -> bool:
    """True when a cell's string is prose a model must read as data, not instructions."""
    if not isinstance(value, str) or len(value) < 12:
        return False
    prose = _URL.sub(" ", value)
    words = _WORD.findall(prose)
    if len(words) >= PROSE_WORDS or (len(words) >= 3 and _CLAUSE.search(prose)):
        return True
    # deferred: the detector loads its lexicon on first use
    from refgate.provenance.boundaries import scan_untrusted

    signals, _ = scan_untrusted(value)
    return bool(signals)

"""Documented behaviour in the GATE: whether a claim cited only to documentation is about it.

A claim cited only to apiRefs/skillRefs that names the capability, a parameter or the skill, and
holds no proper name absent from that documentation, is a claim about documented behaviour.
"""

from __future__ import annotations

import re

from .lookup import RefIndex

#: A proper name or ticker in a claim ("Apple", "AAPL", "S&P"): capitalised, not the first word.
_PROPER = re.compile(r"(?<=[\w,;:)] )[A-Z][\w&.-]*")


def is_documented(claim: str, indexes: list[RefIndex]) -> bool:
    """True when a claim cited only to documentation is about what it documents: it names the
    capability, a parameter or the skill, and every proper name it holds is in that
    documentation ("According to top_n, Apple is the largest" names Apple, a data item)."""
    low = claim.lower()
    if not _names_documented(low, indexes):
        return False
    text = "\n".join(i.doc_text for i in indexes)
    names = " ".join(n for i in indexes for n in i.doc_names)
    for m in _PROPER.finditer(claim):
        word = m.group().rstrip(".-").lower()
        if word and word not in text and word not in names:
            return False
    return True


def _names_documented(claim_low: str, indexes: list[RefIndex]) -> bool:
    """True when the claim names something a cited documentation ref documents (as a word)."""
    for idx in indexes:
        for name in idx.doc_names:
            at = claim_low.find(name)
            while at != -1:
                end = at + len(name)
                before = claim_low[at - 1] if at else " "
                after = claim_low[end] if end < len(claim_low) else " "
                if not (before.isalnum() or before == "_") and not (
                    after.isalnum() or after == "_"
                ):
                    return True
                at = claim_low.find(name, at + 1)
    return False

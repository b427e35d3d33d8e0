"""What the model sees of document evidence: whole chunks within each pass's token budget."""

from __future__ import annotations

import json

from refgate.nodes.common import PASS_REF_TOKENS, refs_block
from refgate.refs import RefLedger


def _ledger(n: int, chars: int) -> dict:
    ledger = RefLedger()
    for i in range(n):
        ledger.issue(
            "docRef",
            {"doc_id": f"report#p{i + 1}", "excerpt": f"Page {i + 1}. " + "word " * (chars // 5)},
            title=f"report.pdf p. {i + 1}",
            source="documents/report.pdf",
            source_type="external",
        )
    return ledger.all()


def test_compose_sees_a_whole_chunk_not_its_first_600_characters():
    refs = _ledger(1, 3000)
    block = refs_block(refs, pass_name="compose")
    (excerpt,) = [r.payload["excerpt"] for r in refs.values()]
    assert excerpt.strip().split()[-1] in block and block.count("word") >= 590
    assert "details omitted" not in block


def test_refs_past_the_budget_are_listed_and_counted():
    refs = _ledger(40, 3000)  # ~40 x 650 tokens, far past COMPOSE's budget
    block = refs_block(refs, pass_name="compose")
    lines = block.splitlines()
    omitted = [ln for ln in lines if "details omitted" in ln]
    note = json.loads(lines[-1])["note"]
    assert omitted and note.startswith(f"{len(omitted)} of 40 refs listed by id and title only")
    assert str(PASS_REF_TOKENS["compose"]) in note
    # the newest evidence is the one kept whole
    assert "details omitted" not in lines[-2] and "details omitted" in lines[0]
    # a smaller pass budget keeps fewer whole
    work = refs_block(refs, pass_name="work")
    assert work.count("details omitted") > len(omitted)

"""The GATE's findings as plain data: each record is its dataclass's fields, copied."""

from __future__ import annotations

from dataclasses import fields

import pytest

from refgate.gate.findings import GateIssue, Match, MentionCheck
from refgate.verdict import IssueRecord, MatchRecord, MentionRecord


@pytest.mark.parametrize(
    ("finding", "record"),
    [(GateIssue, IssueRecord), (Match, MatchRecord), (MentionCheck, MentionRecord)],
)
def test_each_record_names_exactly_its_findings_fields(finding: type, record: type) -> None:
    assert [f.name for f in fields(finding)] == list(record.__annotations__)


def test_an_issue_and_a_mention_become_plain_data_that_shares_no_list() -> None:
    issue = GateIssue("uncited_claim", "Sales rose 5%.", "no citation", ["val_1"], "warn")
    as_data = issue.to_dict()
    assert as_data == {
        "code": "uncited_claim",
        "claim": "Sales rose 5%.",
        "detail": "no citation",
        "ref_ids": ["val_1"],
        "severity": "warn",
    }
    as_data["ref_ids"].append("val_2")
    assert issue.ref_ids == ["val_1"]
    mention = MentionCheck("number", "5%", True, [Match("val_1", "value", secondary=True)])
    assert mention.to_dict() == {
        "kind": "number",
        "text": "5%",
        "supported": True,
        "matches": [{"ref_id": "val_1", "how": "value", "secondary": True}],
        "note": "",
    }

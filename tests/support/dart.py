"""Helpers of the DART tests: the synthetic recording served by the local fake of OpenDART, and
a workspace whose [dart] block lists its companies."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_opendart import KEY, FakeOpenDart

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORDING = REPO / "examples" / "kr-filings" / "recording"

__all__ = ["KEY", "RECORDING", "FakeOpenDart", "write_workspace"]


DART_BLOCK = """
[dart]
companies = {companies}
reports = ["사업보고서", "반기보고서", "주요사항보고서"]
start = "2023-01-01"
end = "{end}"
"""


def write_workspace(
    root: Path, *, companies: str = '["900001", "99100002", "900003"]', end: str = "2024-12-31"
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(
        'name = "kr-test"\n' + DART_BLOCK.format(companies=companies, end=end), encoding="utf-8"
    )
    return root

"""Helpers of the DART tests: the synthetic recording served by the local fake of OpenDART, and
a workspace whose [dart] block lists its companies."""

from __future__ import annotations

from pathlib import Path

from benchmarks.shared.fake_opendart import KEY, FakeOpenDart

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
    root: Path,
    *,
    companies: str = '["900001", "99100002", "900003"]',
    end: str = "2024-12-31",
    limits: str = "",
) -> Path:
    """A workspace syncing ``companies``; ``limits`` is the body of its ``[dart.limits]``."""
    root.mkdir(parents=True, exist_ok=True)
    block = DART_BLOCK.format(companies=companies, end=end)
    if limits:
        block += f"\n[dart.limits]\n{limits}\n"
    (root / "refgate.toml").write_text('name = "kr-test"\n' + block, encoding="utf-8")
    return root

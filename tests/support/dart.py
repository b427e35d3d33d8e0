"""Helpers of the DART tests: the synthetic recording served by the local fake of OpenDART, and
a workspace whose [dart] block lists its companies."""

from __future__ import annotations

from pathlib import Path

from benchmarks.shared.fake_opendart import KEY, FakeOpenDart

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORDING = REPO / "examples" / "kr-filings" / "recording"

__all__ = [
    "KEY",
    "REAL_DATA",
    "RECORDING",
    "FakeOpenDart",
    "build_real_recording",
    "write_real_workspace",
    "write_workspace",
]


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


#: The shared real DART data (read-only) the real recording is built from.
REAL_DATA = REPO.parent / "shared" / "data" / "dart-real"
#: The receipt-date window of the real recording: 엔씨소프트's filings from its 2022 반기보고서
#: to its FY2023 사업보고서 and its amendment, and 삼성전자's 2022 반기보고서.
REAL_WINDOW = ("20220801", "20240331")
REAL_BLOCK = """
[dart]
companies = {companies}
reports = ["사업보고서", "반기보고서", "분기보고서"]
start = "{start}"
end = "{end}"
"""


def build_real_recording(out: Path) -> Path:
    """The real recording (``scripts/make_dart_recording.py``) over ``REAL_WINDOW`` in ``out``."""
    from tests.support.scripts import load_script

    make = load_script("scripts/make_dart_recording.py")
    make.build(out, data=REAL_DATA, start=REAL_WINDOW[0], end=REAL_WINDOW[1])
    return out


def write_real_workspace(
    root: Path,
    *,
    companies: str = '["엔씨소프트", "000660", "00164742", "005930"]',
    start: str = "2022-08-01",
    end: str = "2024-03-31",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    block = REAL_BLOCK.format(companies=companies, start=start, end=end)
    (root / "refgate.toml").write_text('name = "kr-real"\n' + block, encoding="utf-8")
    return root

"""The ``[dart]`` block of ``refgate.toml``::

    [dart]
    companies = ["005930", "00164779", "엔씨소프트"]  # stock codes, corp_codes or exact names
    reports = ["사업보고서", "반기보고서"]     # 사업보고서, 반기보고서, 분기보고서, 주요사항보고서
    start = "2023-01-01"                    # receipt dates (rcept_dt), inclusive
    end = "2024-12-31"                      # default: today
    statements = true                       # fetch 단일회사 전체 재무제표 of periodic reports
    documents = "documents/dart"            # where the filings' sections go (inside [documents])
    dataset = "data/dart/statements.csv"    # the statements dataset
    cache = "dart"                          # raw answers and the sync's manifest

    [dart.limits]                           # what an OpenDART answer may cost (defaults shown)
    max_json_mb = 8                         # a list.json or fnlttSinglAcntAll answer
    max_zip_mb = 64                         # a document.xml or corpCode.xml ZIP as received
    max_xml_mb = 64                         # one XML member of such a ZIP, unpacked
    max_depth = 200                         # elements nested in a filing's XML
    request_timeout_s = 30                  # one request, however slowly its bytes come
    sync_deadline_s = 3600                  # the whole sync

Read straight from the TOML (not through ``load_workspace``) so a first sync can run before the
dataset file it writes exists.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass
from pathlib import Path

from refgate.errors import SettingsError
from refgate.paths import PathEscape, confine

#: Report type names -> list.json detail types (pblntf_detail_ty).
REPORT_TYPES: dict[str, tuple[str, ...]] = {
    "사업보고서": ("A001",),
    "반기보고서": ("A002",),
    "분기보고서": ("A003",),
    "주요사항보고서": ("B001",),
}
ALIASES = {
    "반기": "반기보고서",
    "분기": "분기보고서",
    "주요사항": "주요사항보고서",
    "사업": "사업보고서",
}
KEYS = frozenset(
    {
        "companies",
        "reports",
        "start",
        "end",
        "statements",
        "documents",
        "dataset",
        "cache",
        "limits",
    }
)
MB = 1024 * 1024


class DartConfigError(SettingsError, ValueError):
    """A ``[dart]`` block that cannot be used (the message names the file and field)."""


@dataclass(frozen=True)
class DartLimits:
    """What one OpenDART answer and one sync may cost (``[dart.limits]``): every answer is
    read as a stream and refused past its cap, every ZIP member is unpacked under its cap, a
    filing nested deeper than ``max_depth`` is skipped, and each request and the whole sync end
    by their deadlines however slowly a server sends."""

    max_json_bytes: int = 8 * MB
    max_zip_bytes: int = 64 * MB
    max_xml_bytes: int = 64 * MB
    max_depth: int = 200
    request_timeout_s: float = 30.0
    sync_deadline_s: float = 3600.0


#: ``[dart.limits]`` keys -> (field, scale, lowest, highest)
_LIMITS: dict[str, tuple[str, float, float, float]] = {
    "max_json_mb": ("max_json_bytes", MB, 0.001, 1024),
    "max_zip_mb": ("max_zip_bytes", MB, 0.001, 4096),
    "max_xml_mb": ("max_xml_bytes", MB, 0.001, 4096),
    "max_depth": ("max_depth", 1, 8, 10_000),
    "request_timeout_s": ("request_timeout_s", 1, 0.05, 3600),
    "sync_deadline_s": ("sync_deadline_s", 1, 0.1, 7 * 86400),
}


def _limits(block: object, where: str) -> DartLimits:
    if block is None:
        return DartLimits()
    if not isinstance(block, dict):
        raise DartConfigError(f"{where}: a table of limits")
    unknown = sorted(set(block) - set(_LIMITS))
    if unknown:
        raise DartConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    values: dict[str, float] = {}
    for key, raw in block.items():
        name, scale, low, high = _LIMITS[key]
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not low <= raw <= high:
            raise DartConfigError(f"{where}.{key}: a number from {low:g} to {high:g}")
        values[name] = raw * scale
    d = DartLimits()
    return DartLimits(
        max_json_bytes=int(values.get("max_json_bytes", d.max_json_bytes)),
        max_zip_bytes=int(values.get("max_zip_bytes", d.max_zip_bytes)),
        max_xml_bytes=int(values.get("max_xml_bytes", d.max_xml_bytes)),
        max_depth=int(values.get("max_depth", d.max_depth)),
        request_timeout_s=values.get("request_timeout_s", d.request_timeout_s),
        sync_deadline_s=values.get("sync_deadline_s", d.sync_deadline_s),
    )


@dataclass(frozen=True)
class DartConfig:
    root: Path
    companies: tuple[str, ...]
    reports: tuple[str, ...]
    start: dt.date
    end: dt.date
    statements: bool
    documents: Path
    dataset: Path
    cache: Path
    limits: DartLimits = DartLimits()

    @property
    def detail_types(self) -> list[str]:
        return [t for r in self.reports for t in REPORT_TYPES[r]]


def _date(value: object, where: str) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value).replace(".", "-"))
    except ValueError as exc:
        raise DartConfigError(f"{where}: expected a date YYYY-MM-DD, got {value!r}") from exc


def _companies(companies: object, where: str) -> list[str]:
    """``[dart] companies``: stock codes, corp_codes or company names, as strings."""
    if not isinstance(companies, list) or not companies:
        raise DartConfigError(f"{where}.companies: a list of stock codes or corp_codes")
    for c in companies:
        if not isinstance(c, str) or not c.strip() or len(c) > 100 or not c.isprintable():
            raise DartConfigError(
                f"{where}.companies: {c!r} is neither a stock code (6 digits), a corp_code "
                "(8 digits) nor a company name; write it as a string"
            )
    return companies


def _report_types(reports: object, where: str) -> list[str]:
    """``[dart] reports``: the report types' names (an alias read as its name)."""
    if not isinstance(reports, list) or not reports:
        raise DartConfigError(f"{where}.reports: a list of report types")
    names = []
    for r in reports:
        name = ALIASES.get(str(r), str(r))
        if name not in REPORT_TYPES:
            raise DartConfigError(
                f"{where}.reports: unknown report type {r!r} (known: {', '.join(REPORT_TYPES)})"
            )
        names.append(name)
    return names


def load_dart_config(workspace: Path | str, *, today: dt.date | None = None) -> DartConfig:
    """The ``[dart]`` block of ``<workspace>/refgate.toml``; ``DartConfigError`` when it is
    missing or wrong."""
    root = Path(workspace).expanduser().resolve()
    path = root / "refgate.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DartConfigError(f"{path}: missing (a workspace needs a refgate.toml)") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DartConfigError(f"{path}: not valid TOML: {exc}") from exc
    block = raw.get("dart")
    where = f"{path}: [dart]"
    if not isinstance(block, dict):
        raise DartConfigError(f"{where} is missing: list the companies to sync there")
    unknown = sorted(set(block) - KEYS)
    if unknown:
        raise DartConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    companies = _companies(block.get("companies"), where)
    names = _report_types(block.get("reports", ["사업보고서"]), where)
    start = _date(block.get("start", "2020-01-01"), f"{where}.start")
    end = _date(block["end"], f"{where}.end") if "end" in block else (today or dt.date.today())
    if end < start:
        raise DartConfigError(f"{where}: end {end} is before start {start}")
    statements = block.get("statements", True)
    if not isinstance(statements, bool):
        raise DartConfigError(f"{where}.statements: true or false")

    def inside(key: str, default: str) -> Path:
        try:
            return confine(root / str(block.get(key, default)), [root], what=f"dart.{key}")
        except PathEscape as exc:
            raise DartConfigError(f"{where}.{key}: {exc}") from exc

    return DartConfig(
        root=root,
        companies=tuple(dict.fromkeys(companies)),
        reports=tuple(dict.fromkeys(names)),
        start=start,
        end=end,
        statements=statements,
        documents=inside("documents", "documents/dart"),
        dataset=inside("dataset", "data/dart/statements.csv"),
        cache=inside("cache", "dart"),
        limits=_limits(block.get("limits"), f"{where}.limits"),
    )

"""Workspaces: a folder with a ``refgate.toml`` naming datasets, documents, skills and settings.

Example::

    name = "us-macro"

    [datasets.macro]
    path = "data/statsmodels_macrodata.csv"
    description = "US quarterly macro data, 1959Q1-2009Q3"
    period = ["year", "quarter"]   # optional: the columns naming a row's period (inferred if absent)
    frequency = "quarterly"         # optional: annual | quarterly | monthly | weekly | daily
    labels = []                     # optional: identifier columns for rankings (e.g. ["Symbol"])
    as_of = "2009-09-30"            # optional: snapshot date of a dataset without a period
    [datasets.macro.columns.realgdp]
    unit = "USD"
    scale = "billion"
    description = "Real GDP (chained 2005 dollars)"

    [datasets.sales]                # a table in a database, reached through Ibis on the host
    url = "postgresql://analyst@db:5432/shop"   # no password: refused if present
    table = "public.sales"
    password_env = "SHOP_DB_PASSWORD"           # optional; else PGPASSWORD / ~/.pgpass

    [documents]
    path = "documents"          # a folder of .txt/.md/.html files
    date_from_filename = "%Y%m%d"

    [skills]
    path = "skills"             # optional; refgate's built-in skills are always available

    [paths]
    allowed_roots = ["../shared-data"]   # optional: folders outside the workspace it may use

Every path (datasets, documents, skills, web snapshot) must resolve, symlinks included, inside the
workspace folder or one of its ``allowed_roots``; ``refgate.paths`` holds the rule.

    [settings]
    work_max_rounds = 8

    [gate]
    names = ["MSCI World 100"]  # optional: names with numbers, beside the built-in "S&P 500", ...

    [outbound]
    webhook_url = "https://hooks.example.com/refgate"  # optional: post finished reports here,
    approval_timeout_s = 300                            # each post approved by a person first

    [mcp.servers.fx]                    # optional: MCP servers whose tools WORK may call
    command = ["python", "fx_server.py"]   # or url = "http://127.0.0.1:8800/mcp"
    read_only_tools = ["rate"]             # see refgate.mcp_servers
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import urlsplit

from typing_extensions import TypedDict

from refgate.config import ConfigError, load_settings
from refgate.errors import WorkspaceError as WorkspaceError  # raised here, named here too
from refgate.mcp_servers import McpServerSpec, parse_mcp_servers
from refgate.paths import PathEscape, check_served, confine, recheck, served_allowlist

#: Units a dataset column may declare.
KNOWN_UNITS = frozenset(
    {
        "USD",
        "KRW",
        "EUR",
        "%",
        "percent",
        "ratio",
        "bp",
        "x",
        "index",
        "count",
        "persons",
        "thousand persons",
        "years",
        "days",
        "date",
        "text",
        "USD/share",
        "rate",
    }
)
KNOWN_SCALES = frozenset({"thousand", "million", "billion", "trillion", "천", "만", "억", "조"})
KNOWN_FREQUENCIES = frozenset({"annual", "quarterly", "monthly", "weekly", "daily"})
_DATASET_KEYS = frozenset(
    {"path", "description", "source", "columns", "period", "frequency", "labels", "as_of"}
    | {"url", "table", "password_env", "header_rows"}
)
_BARE_YEAR = re.compile(r"^(?:19|20)\d\d$")
#: Most header rows a CSV dataset may declare (``header_rows``).
MAX_HEADER_ROWS = 6
#: Database URL schemes a warehouse dataset may use (reached through Ibis on the host).
WAREHOUSE_SCHEMES = frozenset({"postgresql", "postgres"})
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_COLUMN_KEYS = frozenset({"unit", "scale", "description"})
_DATASET_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


#: A table of ``refgate.toml`` as read: every value is checked where it is used.
TomlTable: TypeAlias = dict[str, object]


class WarehouseFields(TypedDict):
    """A warehouse dataset's connection fields, checked (``DatasetSpec``'s keyword arguments)."""

    url: str
    table: str
    password_env: str | None


def _unknown_keys(table: TomlTable, known: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise WorkspaceError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    unit: str | None = None
    scale: str | None = None
    description: str = ""


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    #: The file, or None for a warehouse dataset (a table in a database: ``url`` and ``table``).
    path: Path | None
    description: str = ""
    columns: dict[str, ColumnSpec] = field(default_factory=dict)
    source: str = ""
    #: Every column of the file, in file order.
    header: tuple[str, ...] = ()
    #: Columns naming a row's period (``("year", "quarter")``, ``("Date",)``); empty = infer.
    period: tuple[str, ...] = ()
    frequency: str | None = None
    #: Identifier columns used to label rows in rankings (``("Symbol", "Name")``).
    labels: tuple[str, ...] = ()
    #: Snapshot date (ISO) for a dataset whose rows carry no period.
    as_of: str | None = None
    #: A warehouse dataset: the database URL (no password), the table, and the environment
    #: variable holding the password (else libpq's own: PGPASSWORD, ~/.pgpass).
    url: str | None = None
    table: str | None = None
    password_env: str | None = None
    #: How many rows of a CSV file are its header (a caption, the years, a unit row, as annual
    #: report tables print them); ``header`` joins them per column (``joined_header``).
    header_rows: int = 1

    @property
    def is_warehouse(self) -> bool:
        return self.url is not None

    @property
    def format(self) -> str:
        if self.is_warehouse:
            return "warehouse"
        suffix = self.path.suffix.lower() if self.path is not None else ""
        return "parquet" if suffix in (".parquet", ".pq") else "csv"

    def checked_path(self) -> Path:
        """The file's path, re-checked now: ``WorkspaceError`` when it no longer resolves to
        the real path confined at load time (a symlink swapped in since)."""
        if self.path is None:
            raise WorkspaceError(
                f"dataset {self.name!r} is a table in a database, not a file: query it with "
                "sql() in RunPython"
            )
        try:
            return recheck(self.path, what=f"dataset {self.name!r}")
        except PathEscape as exc:
            raise WorkspaceError(str(exc)) from exc

    @property
    def pandas_csv_options(self) -> dict[str, Any]:
        """``pandas.read_csv`` keywords that read the file as its header says (several header
        rows: read as the header, then named ``header``; ``skiprows`` with ``header=None``
        reads no rows at all from some such files)."""
        if self.header_rows <= 1:
            return {}
        return {"header": list(range(self.header_rows))}

    @property
    def date_columns(self) -> tuple[str, ...]:
        """Columns declared with unit ``date`` (parsed as dates when the data is loaded)."""
        return tuple(c.name for c in self.columns.values() if c.unit == "date")


@dataclass(frozen=True)
class Workspace:
    root: Path
    name: str
    datasets: dict[str, DatasetSpec] = field(default_factory=dict)
    documents_path: Path | None = None
    #: ``[documents]``'s options besides ``path``, as written (retrieval reads them).
    documents_options: dict[str, Any] = field(default_factory=dict)
    skills_path: Path | None = None
    web_snapshot_path: Path | None = None
    settings: TomlTable = field(default_factory=dict)
    #: Folders outside ``root`` the workspace may use (``[paths] allowed_roots``), real paths.
    allowed_roots: tuple[Path, ...] = ()
    #: Names that contain numbers, added to the GATE's built-in list (``[gate] names``).
    gate_names: tuple[str, ...] = ()
    #: Where finished reports are posted once a person approves (``[outbound] webhook_url``).
    webhook_url: str | None = None
    #: How long an approval request stays valid (``[outbound] approval_timeout_s``).
    approval_timeout_s: float = 300.0
    #: MCP servers WORK may call (``[mcp.servers.NAME]``; ``refgate.mcp_servers``).
    mcp_servers: dict[str, McpServerSpec] = field(default_factory=dict)
    #: The document index's backend (``[index]``): ``{"backend": "faiss" | "pgvector",
    #: "dsn": "env:NAME" or a DSN without a password, "name": the index's name}``.
    index_options: dict[str, str] = field(default_factory=dict)
    #: May this workspace's configuration start programs and reach servers (its MCP servers)?
    #: Yes for a workspace the person opened (CLI, Python API); for a folder a client of a
    #: served graph named, only under ``REFGATE_ALLOWED_WORKSPACES`` (``load_served_workspace``).
    may_start_servers: bool = True

    @property
    def roots(self) -> tuple[Path, ...]:
        """Where every path the workspace names must resolve: its folder and ``allowed_roots``."""
        return (self.root, *self.allowed_roots)

    @property
    def untrusted_folders(self) -> tuple[Path, ...]:
        """Folders whose files are untrusted text (documents and web pages): ``documents/``,
        ``web/``, the declared documents folder and the web snapshot."""
        found = [self.root / "documents", self.root / "web"]
        found += [p for p in (self.documents_path, self.web_snapshot_path) if p is not None]
        return tuple(dict.fromkeys(found))

    @property
    def vocabulary(self) -> dict[str, str]:
        """Column name -> description over the datasets (the GATE's synonyms of metric words:
        a value named after a column is described by it)."""
        return {
            col.name: col.description
            for spec in self.datasets.values()
            for col in spec.columns.values()
            if col.description
        }

    @property
    def state_dir(self) -> Path:
        """``.refgate/`` under the workspace: checkpoints, store, index, audit, artifacts."""
        return self.root / ".refgate"

    def dataset(self, name: str) -> DatasetSpec:
        """The dataset ``name``; ``WorkspaceError`` naming the known datasets otherwise."""
        if name not in self.datasets:
            known = ", ".join(sorted(self.datasets)) or "none"
            raise WorkspaceError(
                f"workspace {self.name!r} has no dataset {name!r}; datasets: {known}"
            )
        return self.datasets[name]

    def contains(self, path: Path | str) -> bool:
        """True when ``path`` resolves inside the workspace folder."""
        try:
            Path(path).resolve().relative_to(self.root.resolve())
        except ValueError:
            return False
        return True


def _table(raw: object, where: str) -> TomlTable:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise WorkspaceError(f"{where} must be a table")
    return raw


#: Most columns a dataset may have, and the longest CSV header line read to find them.
MAX_COLUMNS = 10_000
MAX_HEADER_CHARS = 1_000_000
#: Largest parquet footer (the schema and statistics) read to find the columns.
MAX_PARQUET_FOOTER = 64 << 20


def listing(names: list[str] | tuple[str, ...], limit: int = 20) -> str:
    """``a, b, c`` for a few names; the first ``limit`` and a count for many."""
    shown = ", ".join(str(n)[:80] for n in names[:limit])
    more = len(names) - limit
    return f"{shown}, ... and {more} more" if more > 0 else shown


def _too_wide(path: Path, what: str) -> WorkspaceError:
    return WorkspaceError(
        f"{path.name} has {what}; refgate reads datasets of at most {MAX_COLUMNS:,} columns "
        "(split the table, or keep the columns the analysis needs)"
    )


def _csv_header(path: Path, rows: int = 1) -> list[str]:
    lines = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for _ in range(rows):
            line = fh.readline(MAX_HEADER_CHARS + 1)
            if len(line) > MAX_HEADER_CHARS:
                raise _too_wide(path, f"a header line longer than {MAX_HEADER_CHARS:,} characters")
            lines.append(next(csv.reader([line]), []))
    if any(len(h) > MAX_COLUMNS for h in lines):
        raise _too_wide(path, f"{max(len(h) for h in lines):,} columns")
    return lines[0] if rows == 1 else joined_header(lines)


def joined_header(rows: list[list[str]]) -> list[str]:
    """One name per column from several header rows: each row's cell, a cell of a row above
    the last written once over the empty cells after it ("2019" over "Amount", "%"), joined
    with spaces, a bare year last ("Amount 2019"); an empty name is "column N", a repeated one
    gets " (2)"."""
    width = max((len(r) for r in rows), default=0)
    parts: list[list[str]] = [[] for _ in range(width)]
    for i, row in enumerate(rows):
        carry = ""  # a cell written once over the empty ones after it (not in the last row)
        for j in range(width):
            cell = row[j].strip() if j < len(row) else ""
            if cell:
                parts[j].append(cell)
                carry = cell if i < len(rows) - 1 else ""
            elif carry and any(j < len(r) and r[j].strip() for r in rows[i + 1 :]):
                parts[j].append(carry)
            else:
                carry = ""
    names: list[str] = []
    for j, p in enumerate(parts):
        # a bare year last: "Amount 2019", "% 2019" (a year before "%" reads as a percentage)
        p = [x for x in p if not _BARE_YEAR.match(x)] + [x for x in p if _BARE_YEAR.match(x)]
        name = " ".join(x for x in p if x) or f"column {j + 1}"
        base, k = name, 2
        while name in names:
            name, k = f"{base} ({k})", k + 1
        names.append(name)
    return names


def _parquet_header(path: Path) -> list[str]:
    # deferred: pyarrow is heavy to import; paid on first use
    import pyarrow.parquet as pq

    with path.open("rb") as fh:
        fh.seek(0, 2)
        if fh.tell() >= 12:
            fh.seek(-8, 2)
            footer = int.from_bytes(fh.read(4), "little")
            if footer > MAX_PARQUET_FOOTER:
                raise _too_wide(path, f"a {footer >> 20} MB parquet footer (schema)")
    meta = pq.read_metadata(path)
    if meta.num_columns > MAX_COLUMNS:
        raise _too_wide(path, f"{meta.num_columns:,} columns")
    return list(meta.schema.to_arrow_schema().names)


def _read_header(path: Path, where: str, rows: int = 1) -> list[str]:
    try:
        if path.suffix.lower() == ".csv":
            return _csv_header(path, rows)
        return _parquet_header(path)
    except WorkspaceError as exc:
        raise WorkspaceError(f"{where}: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise WorkspaceError(f"{where}: cannot read the header of {path}: {exc}") from exc
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise WorkspaceError(f"{where}: cannot read the header of {path}: {exc}") from exc


def _names(value: object, where: str, header: list[str] | None) -> tuple[str, ...]:
    """A column name or list of names, each checked against the file's header (a warehouse
    table's columns are not known until it is queried: ``header=None``)."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise WorkspaceError(f"{where}: expected a column name or a list of column names")
    for item in items:
        if header is not None and item not in header:
            raise WorkspaceError(
                f"{where}: unknown column {item[:200]!r} (the file has: {listing(header)})"
            )
    return tuple(items)


def _warehouse(spec: TomlTable, where: str) -> WarehouseFields:
    """``url``, ``table`` and ``password_env`` of a warehouse dataset, checked (no connection
    is made here). A password in the URL is refused: credentials come from the environment."""

    if "path" in spec:
        raise WorkspaceError(f"{where}: give either path (a file) or url (a database), not both")
    url = spec.get("url")
    if not isinstance(url, str) or not url.strip():
        raise WorkspaceError(f"{where}.url: expected a database URL (postgresql://host:port/db)")
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise WorkspaceError(f"{where}.url: not a URL: {exc}") from None
    if parts.scheme not in WAREHOUSE_SCHEMES:
        raise WorkspaceError(
            f"{where}.url: unsupported database {parts.scheme or '(none)'!r} "
            f"(supported: {', '.join(sorted(WAREHOUSE_SCHEMES))})"
        )
    if parts.password is not None:
        raise WorkspaceError(
            f"{where}.url: contains a password; refgate.toml holds no credentials: put the "
            "password in an environment variable and name it in password_env"
        )
    if not parts.hostname or not parts.path.strip("/"):
        raise WorkspaceError(f"{where}.url: needs a host and a database name")
    table = spec.get("table")
    if not isinstance(table, str) or not _TABLE_NAME.match(table):
        raise WorkspaceError(
            f"{where}.table: expected a table name (letters, digits, '_'; 'schema.table' allowed)"
        )
    password_env = spec.get("password_env")
    if password_env is not None and (
        not isinstance(password_env, str) or not _ENV_NAME.match(password_env)
    ):
        raise WorkspaceError(f"{where}.password_env: expected an environment variable name")
    return {"url": url.strip(), "table": table, "password_env": password_env}


def load_workspace(path: Path | str, *, config_file: Path | None = None) -> Workspace:
    """Load and validate ``<path>/refgate.toml`` (or ``config_file``, read as that folder's: a
    candidate ``refgate init`` validates before it replaces the real one); raise
    ``WorkspaceError`` with file and field."""
    root = Path(path).expanduser().resolve()
    config_file = Path(config_file) if config_file is not None else root / "refgate.toml"
    raw = _read_config(root, config_file)
    where = str(config_file)
    allowed_roots = _allowed_roots(raw, root, where)
    roots = (root, *allowed_roots)
    datasets = {
        name: _dataset(name, spec, root, roots, where)
        for name, spec in _table(raw.get("datasets"), f"{where}: [datasets]").items()
    }
    documents_path, documents_options = _folder(raw, "documents", root, roots, where)
    skills_path, _ = _folder(raw, "skills", root, roots, where)
    web_path, _ = _folder(raw, "web_snapshot", root, roots, where)
    settings = _settings(raw, where)
    gate_names = _gate_names(raw, where)
    webhook_url, approval_timeout = _outbound(raw, where)
    mcp_servers = _mcp_servers(raw, where)
    index_options = _index(raw, where)
    return Workspace(
        root=root,
        name=str(raw.get("name") or root.name),
        datasets=datasets,
        documents_path=documents_path,
        documents_options=documents_options,
        skills_path=skills_path,
        web_snapshot_path=web_path,
        settings=settings,
        allowed_roots=allowed_roots,
        gate_names=gate_names,
        webhook_url=webhook_url,
        approval_timeout_s=approval_timeout,
        mcp_servers=mcp_servers,
        index_options=index_options,
    )


#: Document index backends (``[index] backend``): FAISS files under ``.refgate/index`` (the
#: default), or a PostgreSQL database with pgvector shared by every run.
INDEX_BACKENDS = frozenset({"faiss", "pgvector"})
_INDEX_KEYS = frozenset({"backend", "dsn", "name"})
_INDEX_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def _index(raw: TomlTable, where: str) -> dict[str, str]:
    """``[index]``: backend, dsn (``env:NAME``, or a DSN holding no password) and name."""
    spec = _table(raw.get("index"), f"{where}: [index]")
    _unknown_keys(spec, _INDEX_KEYS, f"{where}: [index]")
    out: dict[str, str] = {}
    backend = spec.get("backend", "faiss")
    if backend not in INDEX_BACKENDS:
        raise WorkspaceError(
            f"{where}: [index].backend: {backend!r} (known: {', '.join(sorted(INDEX_BACKENDS))})"
        )
    out["backend"] = str(backend)
    dsn = spec.get("dsn")
    if dsn is not None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise WorkspaceError(f"{where}: [index].dsn: expected env:NAME or a DSN")
        dsn = dsn.strip()
        if dsn.startswith("env:"):
            if not _ENV_NAME.match(dsn[4:]):
                raise WorkspaceError(f"{where}: [index].dsn: {dsn!r} names no environment variable")
        elif _dsn_has_password(dsn):
            raise WorkspaceError(
                f"{where}: [index].dsn holds a password; refgate.toml keeps no credentials: "
                'write dsn = "env:REFGATE_INDEX_DSN" and put the DSN in that environment '
                "variable (or the password in PGPASSWORD or ~/.pgpass)"
            )
        out["dsn"] = dsn
    name = spec.get("name")
    if name is not None:
        if not isinstance(name, str) or not _INDEX_NAME.match(name):
            raise WorkspaceError(
                f"{where}: [index].name: 1-40 letters, digits, '_' or '-', not {name!r}"
            )
        out["name"] = name
    return out


def _dsn_has_password(dsn: str) -> bool:
    """Does a DSN (a URL or ``key=value`` pairs) carry a password?"""
    if "://" in dsn:
        try:
            if urlsplit(dsn).password is not None:
                return True
        except ValueError:
            return True  # unreadable: refuse rather than keep a secret in the file
    return re.search(r"(^|[\s&?])password\s*=", dsn, re.IGNORECASE) is not None


def _read_config(root: Path, config_file: Path) -> TomlTable:
    """The workspace file's TOML as a table; a missing folder or file, bad TOML, too deep a
    nesting or non-UTF-8 bytes are a ``WorkspaceError`` naming the file."""
    if not root.is_dir():
        raise WorkspaceError(f"workspace folder not found: {root}")
    if not config_file.is_file():
        raise WorkspaceError(f"{config_file}: missing (a workspace needs a refgate.toml)")
    try:
        return tomllib.loads(config_file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise WorkspaceError(f"{config_file}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise WorkspaceError(f"{config_file}: nested too deeply to read") from exc
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{config_file}: not UTF-8 text: {exc}") from exc


def _dataset(
    name: str, spec: object, root: Path, roots: tuple[Path, ...], where: str
) -> DatasetSpec:
    """``[datasets.<name>]``: a file in the workspace or a table in a database, its columns,
    period, frequency, labels and snapshot date."""
    spec = _table(spec, f"{where}: [datasets.{name}]")
    if not _DATASET_NAME.match(name):
        raise WorkspaceError(
            f"{where}: datasets.{name}: a dataset name is a letter then letters, digits, "
            "'_' or '-' (at most 64)"
        )
    _unknown_keys(spec, _DATASET_KEYS, f"{where}: datasets.{name}")
    warehouse: WarehouseFields | dict[str, str] = {}
    data_path: Path | None = None
    header: list[str] | None = None
    if "url" in spec:
        warehouse = _warehouse(spec, f"{where}: datasets.{name}")
    else:
        data_path, header = _dataset_file(name, spec, root, roots, where)
    header_rows = _header_rows(name, spec, data_path, where)
    if header_rows > 1 and data_path is not None:
        header = _read_header(data_path, f"{where}: datasets.{name}.path", header_rows)
    columns = _columns(name, spec, header, where)
    frequency = _frequency(name, spec, where)
    as_of = _as_of(name, spec, where)
    return DatasetSpec(
        name,
        data_path,
        str(spec.get("description", "")),
        columns,
        str(spec.get("source", "")),
        header=tuple(header or ()),
        period=_names(spec.get("period"), f"{where}: datasets.{name}.period", header),
        frequency=frequency,
        labels=_names(spec.get("labels"), f"{where}: datasets.{name}.labels", header),
        as_of=as_of,
        **warehouse,
        header_rows=header_rows,
    )


def _header_rows(name: str, spec: TomlTable, path: Path | None, where: str) -> int:
    """``header_rows``: how many rows of a CSV file are its header (1 to ``MAX_HEADER_ROWS``)."""
    value = spec.get("header_rows", 1)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_HEADER_ROWS:
        raise WorkspaceError(
            f"{where}: datasets.{name}.header_rows: expected a whole number from 1 to "
            f"{MAX_HEADER_ROWS}, got {value!r}"
        )
    if value > 1 and (path is None or path.suffix.lower() != ".csv"):
        raise WorkspaceError(
            f"{where}: datasets.{name}.header_rows: only a CSV file has header rows"
        )
    return value


def _dataset_file(
    name: str, spec: TomlTable, root: Path, roots: tuple[Path, ...], where: str
) -> tuple[Path, list[str]]:
    """A file dataset's confined path (a .csv or .parquet file) and its header."""
    if "path" not in spec:
        raise WorkspaceError(
            f"{where}: datasets.{name}.path is required (or url and table for a table "
            "in a database)"
        )
    for key in ("table", "password_env"):
        if key in spec:
            raise WorkspaceError(f"{where}: datasets.{name}.{key} needs url")
    data_path = _confined(root / str(spec["path"]), roots, f"{where}: datasets.{name}.path")
    if not data_path.is_file():
        raise WorkspaceError(f"{where}: datasets.{name}.path: file not found: {data_path}")
    if data_path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        raise WorkspaceError(f"{where}: datasets.{name}.path: expected .csv or .parquet")
    header = _read_header(data_path, f"{where}: datasets.{name}.path")
    if not header:
        raise WorkspaceError(f"{where}: datasets.{name}.path: {data_path} has no columns")
    return data_path, header


def _columns(
    name: str, spec: TomlTable, header: list[str] | None, where: str
) -> dict[str, ColumnSpec]:
    """``[datasets.<name>.columns.<col>]``: each a column of the file (when the header is
    known), with a known unit and scale."""
    columns: dict[str, ColumnSpec] = {}
    for col, cspec in _table(spec.get("columns"), f"{where}: datasets.{name}.columns").items():
        cspec = _table(cspec, f"{where}: datasets.{name}.columns.{col}")
        _unknown_keys(cspec, _COLUMN_KEYS, f"{where}: datasets.{name}.columns.{col}")
        if header is not None and col not in header:
            raise WorkspaceError(
                f"{where}: datasets.{name}.columns.{col[:200]}: unknown column "
                f"(the file has: {listing(header)})"
            )
        unit = cspec.get("unit")
        if unit is not None and unit not in KNOWN_UNITS:
            raise WorkspaceError(
                f"{where}: datasets.{name}.columns.{col}.unit: bad unit {unit!r} "
                f"(known: {', '.join(sorted(KNOWN_UNITS))})"
            )
        scale = cspec.get("scale")
        if scale is not None and scale not in KNOWN_SCALES:
            raise WorkspaceError(
                f"{where}: datasets.{name}.columns.{col}.scale: bad scale {scale!r} "
                f"(known: {', '.join(sorted(KNOWN_SCALES))})"
            )
        columns[col] = ColumnSpec(col, unit, scale, str(cspec.get("description", "")))
    return columns


def _frequency(name: str, spec: TomlTable, where: str) -> str | None:
    """A dataset's ``frequency``, one of ``KNOWN_FREQUENCIES``, or None."""
    frequency = spec.get("frequency")
    if frequency is not None and frequency not in KNOWN_FREQUENCIES:
        raise WorkspaceError(
            f"{where}: datasets.{name}.frequency: bad frequency {frequency!r} "
            f"(known: {', '.join(sorted(KNOWN_FREQUENCIES))})"
        )
    return frequency


def _as_of(name: str, spec: TomlTable, where: str) -> str | None:
    """A dataset's snapshot date ``as_of`` as an ISO date, or None."""
    as_of = spec.get("as_of")
    if as_of is None:
        return None
    try:
        return _dt.date.fromisoformat(str(as_of)).isoformat()
    except ValueError as exc:
        raise WorkspaceError(
            f"{where}: datasets.{name}.as_of: expected an ISO date (YYYY-MM-DD), "
            f"got {spec.get('as_of')!r}"
        ) from exc


def _folder(
    raw: TomlTable, section: str, root: Path, roots: tuple[Path, ...], where: str
) -> tuple[Path | None, TomlTable]:
    """``[<section>]``'s confined folder (``path``) and its other options; (None, {}) if absent."""
    table = _table(raw.get(section), f"{where}: [{section}]")
    if not table:
        return None, {}
    if "path" not in table:
        raise WorkspaceError(f"{where}: {section}.path is required")
    folder = _confined(root / str(table["path"]), roots, f"{where}: {section}.path")
    if not folder.is_dir():
        raise WorkspaceError(f"{where}: {section}.path: folder not found: {folder}")
    return folder, {k: v for k, v in table.items() if k != "path"}


def _settings(raw: TomlTable, where: str) -> TomlTable:
    """``[settings]``, validated as the settings would read them."""
    settings = _table(raw.get("settings"), f"{where}: [settings]")
    if settings:
        try:
            load_settings({}, settings)
        except (ConfigError, TypeError) as exc:
            raise WorkspaceError(f"{where}: {exc}") from exc
    return settings


def _gate_names(raw: TomlTable, where: str) -> tuple[str, ...]:
    """``[gate] names``: the workspace's names with numbers (``check_names``)."""
    gate = _table(raw.get("gate"), f"{where}: [gate]")
    _unknown_keys(gate, frozenset({"names"}), f"{where}: [gate]")
    names = gate.get("names", [])
    if not isinstance(names, list):
        raise WorkspaceError(f"{where}: gate.names: expected a list of names")
    try:
        return check_names(names, f"{where}: gate.names")
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from exc


def _mcp_servers(raw: TomlTable, where: str) -> dict[str, McpServerSpec]:
    """``[mcp.servers.*]`` (``parse_mcp_servers``)."""
    try:
        return parse_mcp_servers(raw.get("mcp"), where)
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from exc


def _outbound(raw: TomlTable, where: str) -> tuple[str | None, float]:
    """``[outbound]``: the webhook URL (http or https, with a host) and the approval timeout."""

    table = _table(raw.get("outbound"), f"{where}: [outbound]")
    _unknown_keys(table, frozenset({"webhook_url", "approval_timeout_s"}), f"{where}: [outbound]")
    url = table.get("webhook_url")
    if url is not None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise WorkspaceError(
                f"{where}: outbound.webhook_url: expected an http(s) URL with a host, got {url!r}"
            )
    timeout = table.get("approval_timeout_s", 300)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise WorkspaceError(
            f"{where}: outbound.approval_timeout_s: expected a positive number of seconds, "
            f"got {timeout!r}"
        )
    return (url if isinstance(url, str) else None), float(timeout)


def _confined(path: Path, roots: tuple[Path, ...], where: str) -> Path:
    try:
        return confine(path, roots, what=where)
    except PathEscape as exc:
        raise WorkspaceError(
            f"{exc}; list the folder under [paths] allowed_roots to use it"
        ) from exc


def _allowed_roots(raw: TomlTable, root: Path, where: str) -> tuple[Path, ...]:
    table = _table(raw.get("paths"), f"{where}: [paths]")
    _unknown_keys(table, frozenset({"allowed_roots"}), f"{where}: [paths]")
    items = table.get("allowed_roots", [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise WorkspaceError(f"{where}: paths.allowed_roots: expected a list of folder paths")
    out: list[Path] = []
    for i, item in enumerate(items):
        folder = Path(os.path.realpath(root / Path(item).expanduser()))
        if not folder.is_dir():
            raise WorkspaceError(
                f"{where}: paths.allowed_roots[{i}]: folder not found: {item} ({folder})"
            )
        out.append(folder)
    return tuple(dict.fromkeys(out))


def load_served_workspace(
    path: Path | str,
    env: Mapping[str, str] | None = None,
    *,
    loader: Callable[[str], Workspace] | None = None,
) -> Workspace:
    """``load_workspace`` for a folder a client named: with ``REFGATE_ALLOWED_WORKSPACES`` set,
    the folder and every ``allowed_roots`` entry must lie inside it (``PathEscape`` otherwise; an
    allowlist with no usable entry refuses everything). Every served graph loads through here.

    A client-named folder's MCP servers are code execution (a command) or outbound (a URL), so
    they may start only when the operator allowlisted the folder (``may_start_servers``)."""
    allowlist = served_allowlist(env)
    check_served(path, allowlist, what="workspace")
    ws = (loader or load_workspace)(str(Path(path).expanduser().resolve()))
    for i, extra in enumerate(ws.allowed_roots):
        check_served(extra, allowlist, what=f"{ws.root / 'refgate.toml'}: paths.allowed_roots[{i}]")
    return replace(ws, may_start_servers=allowlist is not None)


#: Words that, alone beside the digits, make a "name" a quantity.
_QUANTITY_WORDS = frozenset(
    [
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "billions",
        "trillion",
        "trillions",
        "k",
        "m",
        "mn",
        "bn",
        "b",
        "tn",
        "percent",
        "pct",
        "pp",
        "bp",
        "bps",
        "basis",
        "points",
        "point",
        "usd",
        "eur",
        "gbp",
        "jpy",
        "krw",
        "cny",
        "rmb",
        "dollars",
        "dollar",
        "euro",
        "euros",
        "yen",
        "won",
        "x",
        "times",
        "천",
        "만",
        "억",
        "조",
        "원",
        "달러",
        "엔",
        "위안",
        "퍼센트",
        "배",
    ]
)


def check_names(names: Iterable[object], where: str = "gate.names") -> tuple[str, ...]:
    """Validate user-supplied names; raise ``ValueError`` naming the bad entry."""
    out: list[str] = []
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise ValueError(f"{where}[{i}]: a name is a string, got {type(name).__name__}")
        text = " ".join(name.split())
        if not text or len(text) > 80:
            raise ValueError(f"{where}[{i}]: a name is 1 to 80 characters, got {name!r}")
        if not any(ch.isdigit() for ch in text):
            raise ValueError(
                f"{where}[{i}]: {name!r} holds no digit (only names with numbers need listing)"
            )
        words = [w.lower() for w in re.findall(r"[^\W\d_]+", text)]
        if not words or all(w in _QUANTITY_WORDS for w in words) or sum(map(len, words)) < 2:
            raise ValueError(
                f"{where}[{i}]: {name!r} reads as a quantity, not a name (a name needs words "
                "besides scale, unit or currency words)"
            )
        out.append(text)
    return tuple(out)

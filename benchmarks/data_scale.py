"""Data at any size: sql() over a parquet dataset 4x the sandbox's memory limit, side by side with
the pandas path, InspectDataset on a 5 GB CSV, and the same query on PostgreSQL through Ibis.

Everything is generated under ``--dir`` (default /tmp/refgate-data-scale) and removed afterwards
unless ``--keep``. Figures go to stdout as markdown (copied into docs/benchmarks.md).

- group-by and top-N through ``sql()`` in the bubblewrap sandbox, with the sandbox's address
  space capped at ``--memory-mb`` (default 2048, the default limit) and a parquet file whose
  in-memory size is 4x that;
- the pandas path on the same file: ``datasets[...]`` (refused at once, pointing at sql()) and a
  raw ``pd.read_parquet`` (which must fail with MemoryError, not hang);
- InspectDataset (DuckDB profile) on a ``--csv-gb`` (default 5) GB CSV;
- the address space (what the sandbox's RLIMIT_AS counts) of pandas plus DuckDB with the
  allocator defaults and with the sandbox's settings;
- with ``--pg-url`` (or REFGATE_TEST_POSTGRES_URL): the group-by over ``--pg-rows`` rows in
  PostgreSQL through the host's Ibis query proxy, and over the same rows as parquet through DuckDB.

Run: ``python benchmarks/data_scale.py`` (about 5-10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.refs import RefLedger
from refgate.tools.registry import get_spec
from refgate.tools.run_python import run_python
from refgate.tools.sandbox.limits import Limits
from refgate.workspace import load_workspace

GROUPS = 1000
CHUNK = 10_000_000


def _gb(n: float) -> str:
    return f"{n / (1 << 30):.2f} GB"


def make_parquet(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(19)
    schema = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("v", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            ids = np.arange(start, start + n, dtype=np.int64)
            writer.write_table(
                pa.table(
                    {"id": ids, "k": rng.integers(0, GROUPS, n), "v": rng.random(n) * 1000},
                    schema=schema,
                )
            )


def make_csv(path: Path, target_bytes: int) -> int:
    import duckdb

    per_row = 48  # measured below; the first pass writes a sample to size the rest
    rows = target_bytes // per_row
    con = duckdb.connect(config={"threads": "2", "memory_limit": "2GB"})
    quoted = str(path).replace("'", "''")
    con.execute(
        "COPY (SELECT i AS id, DATE '2000-01-01' + CAST(i % 9000 AS INTEGER) AS date, "
        "(i * 7919) % 100000 / 7.0 AS amount, 'region_' || (i % 97) AS region "
        f"FROM range({rows}) t(i)) TO '{quoted}' (HEADER, DELIMITER ',')"
    )
    con.close()
    return rows


def workspace(root: Path, name: str, file: str, extra: str = "") -> Path:
    (root / "refgate.toml").write_text(f'[datasets.{name}]\npath = "{file}"\n{extra}')
    return root


def timed_run(code: str, ws, settings, limits: Limits, timeout: float = 600.0):
    t0 = time.perf_counter()
    result = run_python(code, workspace=ws, settings=settings, limits=limits, timeout=timeout)
    return result, time.perf_counter() - t0


class Rows(list):
    """Result rows, each also printed as it is measured (a long run shows progress)."""

    def append(self, row) -> None:
        print("  measured: " + " | ".join(row), flush=True)
        super().append(row)

    def __iadd__(self, rows):
        for row in rows:
            self.append(row)
        return self


def first_line(text: str | None) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[:160].replace("|", "/")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/refgate-data-scale")
    ap.add_argument("--memory-mb", type=int, default=2048)
    ap.add_argument("--factor", type=float, default=4.0, help="dataset size / memory limit")
    ap.add_argument("--csv-gb", type=float, default=5.0)
    ap.add_argument("--pg-url", default=os.environ.get("REFGATE_TEST_POSTGRES_URL", ""))
    ap.add_argument("--pg-rows", type=int, default=5_000_000)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--parts", default="memory,parquet,inspect,postgres", help="comma-separated subset"
    )
    args = ap.parse_args()

    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    settings = Settings(model="bench", api_key="bench", sandbox="bwrap")
    limits = Limits(memory_mb=args.memory_mb)
    rows_out: list = []
    parts = set(args.parts.split(","))
    try:
        if "memory" in parts:
            rows_out += memory_rows()
        if "parquet" in parts:
            rows_out += parquet_rows(base, args, settings, limits)
        if "inspect" in parts:
            rows_out += inspect_rows(base, args, settings)
        if "postgres" in parts and args.pg_url:
            rows_out += postgres_rows(base, args, settings, limits)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)

    print()
    print(
        f"sandbox memory limit (RLIMIT_AS): {args.memory_mb} MB; {os.cpu_count()} cores; "
        f"load avg {os.getloadavg()[0]:.1f}"
    )
    print()
    print("| data | path | seconds | outcome |")
    print("|---|---|---|---|")
    for row in rows_out:
        print("| " + " | ".join(row) + " |")


_PROBE = """
import duckdb, pandas as pd
def vm():
    return int([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmSize')][0])
frame = pd.DataFrame({"k": ["a", "b"], "d": ["2020-01-01"] * 2})
frame.assign(d=pd.to_datetime(frame["d"])).groupby("k").size()
after_pandas = vm()
con = duckdb.connect(config={"memory_limit": "512MB", "threads": "2"})
con.sql("SELECT SUM(i) FROM range(10000000) t(i)").fetchall()
print(after_pandas, vm())
"""


def memory_rows() -> list[tuple[str, str, str, str]]:
    """Address space (what RLIMIT_AS counts) of a process like a sandbox call, with the
    allocator defaults and with the sandbox's settings (pyarrow system pool, 2 malloc arenas)."""
    import subprocess
    import sys

    base_env = {"PATH": os.environ.get("PATH", "/usr/bin"), "OPENBLAS_NUM_THREADS": "1"}
    variants = {
        "allocator defaults": {},
        "sandbox settings": {"ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "2"},
    }
    out = []
    for label, extra in variants.items():
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            env={**base_env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )
        pandas_kb, duck_kb = (int(x) for x in done.stdout.split())
        out.append(
            (
                "address space",
                label,
                "-",
                f"after pandas {pandas_kb / 1024:,.0f} MB; after DuckDB (2 threads) "
                f"{duck_kb / 1024:,.0f} MB",
            )
        )
    return out


def parquet_rows(base: Path, args, settings, limits) -> list[tuple[str, str, str, str]]:
    rows_out: list[tuple[str, str, str, str]] = Rows()
    pq_root = base / "parquet"
    pq_root.mkdir(exist_ok=True)
    rows = int(args.factor * (args.memory_mb << 20) / 24)
    t0 = time.perf_counter()
    make_parquet(pq_root / "big.parquet", rows)
    gen = time.perf_counter() - t0
    disk = (pq_root / "big.parquet").stat().st_size
    ws = load_workspace(workspace(pq_root, "big", "big.parquet"))
    print(
        f"# parquet: {rows:,} rows x 3 int64/float64 columns = {_gb(rows * 24)} in memory "
        f"({args.factor:g}x the {args.memory_mb} MB sandbox limit), {_gb(disk)} on disk; "
        f"generated in {gen:.0f} s",
        flush=True,
    )
    group_by = (
        "df = sql('SELECT k, SUM(v) AS total, COUNT(*) AS n FROM big GROUP BY k ORDER BY k')\n"
        "emit_result(table=df.head(20), sources=['big'])\nprint(len(df), int(df.n.sum()))"
    )
    top_n = (
        "df = sql('SELECT id, v FROM big ORDER BY v DESC LIMIT 10')\n"
        "emit_result(table=df, sources=['big'])\nprint(df.v.iloc[0])"
    )
    for label, code in (
        ("group-by (1,000 groups) via sql()", group_by),
        ("top-10 via sql()", top_n),
    ):
        result, secs = timed_run(code, ws, settings, limits)
        outcome = f"ok: {result.stdout.strip()}" if result.ok else first_line(result.error)
        rows_out.append(("parquet " + _gb(rows * 24), label, f"{secs:.1f}", outcome))
    pandas_guard = "df = datasets['big']\nprint(df.groupby('k').v.sum().head())"
    result, secs = timed_run(pandas_guard, ws, settings, limits)
    rows_out.append(
        (
            "parquet " + _gb(rows * 24),
            "pandas: datasets['big'] (guarded)",
            f"{secs:.1f}",
            ("ok?! " if result.ok else "fails: ") + first_line(result.error),
        )
    )
    raw = (
        "import pandas as pd\n"
        "df = pd.read_parquet('/workspace/datasets/big.parquet')\n"
        "print(df.groupby('k').v.sum().head())"
    )
    result, secs = timed_run(raw, ws, settings, limits)
    rows_out.append(
        (
            "parquet " + _gb(rows * 24),
            "pandas: raw pd.read_parquet (no guard)",
            f"{secs:.1f}",
            ("ok?! " if result.ok else "fails: ") + first_line(result.error),
        )
    )
    if not args.keep:
        shutil.rmtree(pq_root, ignore_errors=True)
    return rows_out


def inspect_rows(base: Path, args, settings) -> list[tuple[str, str, str, str]]:
    rows_out: list[tuple[str, str, str, str]] = Rows()
    csv_root = base / "csv"
    csv_root.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    csv_rows = make_csv(csv_root / "sales.csv", int(args.csv_gb * (1 << 30)))
    gen = time.perf_counter() - t0
    size = (csv_root / "sales.csv").stat().st_size
    print(f"# csv: {csv_rows:,} rows, {_gb(size)}; generated in {gen:.0f} s")
    ws = load_workspace(
        workspace(csv_root, "sales", "sales.csv", '[datasets.sales.columns.amount]\nunit = "USD"\n')
    )
    spec = get_spec("InspectDataset")
    ctx = ToolContext("work", RefLedger(), settings, ws)
    t0 = time.perf_counter()
    out = spec.func(spec.args_schema(dataset="sales", sample_rows=3), ctx)
    secs = time.perf_counter() - t0
    outcome = (
        f"ok: {out.data['rows']:,} rows, {out.data['first_period']} to {out.data['latest_period']}"
        if out.ok
        else first_line(out.error)
    )
    rows_out.append((f"csv {_gb(size)}", "InspectDataset (DuckDB profile)", f"{secs:.1f}", outcome))
    if not args.keep:
        shutil.rmtree(csv_root, ignore_errors=True)
    return rows_out


def postgres_rows(base: Path, args, settings, limits) -> list[tuple[str, str, str, str]]:
    import io
    from urllib.parse import urlsplit

    import numpy as np
    import psycopg
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = args.pg_rows
    rng = np.random.default_rng(7)
    k, v = rng.integers(0, GROUPS, n), rng.random(n) * 1000
    t0 = time.perf_counter()
    with psycopg.connect(args.pg_url, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS bench_scale")
        con.execute("CREATE TABLE bench_scale (id bigint, k bigint, v double precision)")
        with con.cursor() as cur, cur.copy("COPY bench_scale FROM STDIN WITH (FORMAT csv)") as cp:
            for start in range(0, n, 1_000_000):
                stop = min(n, start + 1_000_000)
                buf = io.StringIO()
                np.savetxt(
                    buf,
                    np.column_stack([np.arange(start, stop), k[start:stop], v[start:stop]]),
                    fmt=["%d", "%d", "%.6f"],
                    delimiter=",",
                )
                cp.write(buf.getvalue())
        con.execute("ANALYZE bench_scale")
    load = time.perf_counter() - t0
    print(f"# postgres: {n:,} rows loaded in {load:.0f} s")
    root = base / "pg"
    root.mkdir(exist_ok=True)
    pq.write_table(pa.table({"id": np.arange(n), "k": k, "v": v}), root / "same.parquet")
    parts = urlsplit(args.pg_url)
    (root / "refgate.toml").write_text(
        f'[datasets.scale]\nurl = "{parts.scheme}://{parts.username}@{parts.hostname}:'
        f'{parts.port}{parts.path}"\ntable = "bench_scale"\n\n'
        '[datasets.same]\npath = "same.parquet"\n'
    )
    ws = load_workspace(root)
    out = []
    for name, label in (("scale", "PostgreSQL via Ibis proxy"), ("same", "same rows, parquet")):
        code = (
            f"df = sql('SELECT k, SUM(v) AS total, COUNT(*) AS n FROM {name} GROUP BY k "
            "ORDER BY k')\nprint(len(df), int(df.n.sum()))"
        )
        result, secs = timed_run(code, ws, settings, limits)
        outcome = f"ok: {result.stdout.strip()}" if result.ok else first_line(result.error)
        out.append((f"{n:,} rows", f"group-by, {label}", f"{secs:.1f}", outcome))
    with psycopg.connect(args.pg_url, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS bench_scale")
    return out


if __name__ == "__main__":
    main()

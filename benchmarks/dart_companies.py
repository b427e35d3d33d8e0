"""OpenDART's real company list (``../shared/data/dart-real/corpcode/corpCode.zip``, 112,916
companies): the time to load it into ``CompanyIndex``, to build its name index (at the first
``candidates``), and per lookup by stock code, corp_code, exact name and part of a name.

    .venv/bin/python benchmarks/dart_companies.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from pathlib import Path

from refgate.retrieval.dart.companies import CompanyIndex

CORP_ZIP = Path("../shared/data/dart-real/corpcode/corpCode.zip")
LOOKUPS = {
    "stock code": ["005930", "036570", "000660", "005380", "035720"],
    "corp_code": ["00126380", "00261443", "00164779", "00164742", "00258801"],
    "exact name": ["삼성전자", "엔씨소프트", "SK하이닉스", "현대자동차", "카카오"],
    "part of a name": ["삼성", "하이닉스", "전자", "현대", "바이오"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    data = CORP_ZIP.read_bytes()
    loads, cpu = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        index = CompanyIndex.from_zip(data)
        loads.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    t, c = time.perf_counter(), time.process_time()
    index.candidates("삼성")
    names, names_cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"companies: {len(index):,} (load avg {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)"
    )
    print(
        f"load (ZIP stream -> code/stock/name dicts): median {statistics.median(loads):.2f} s "
        f"wall, {statistics.median(cpu):.2f} s CPU"
    )
    print(
        f"name index (bigrams, built at the first candidates lookup): {names:.2f} s wall, "
        f"{names_cpu:.2f} s CPU"
    )
    for kind, queries in LOOKUPS.items():
        lookup = index.candidates if kind == "part of a name" else index.resolve
        c = time.process_time()
        for _ in range(args.repeat):
            for q in queries:
                lookup(q)
        per = (time.process_time() - c) / (args.repeat * len(queries))
        example = lookup(queries[0])
        shown = (
            ", ".join(c.corp_name for c in example[:4])
            if isinstance(example, list)
            else (example.corp_name if example else "-")
        )
        print(f"lookup by {kind}: {per * 1e6:,.1f} µs CPU ({queries[0]} -> {shown})")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:.0f} MB")


if __name__ == "__main__":
    main()

"""Render time and file size of the HTML and markdown reports, small and large runs side by side.

    .venv/bin/python benchmarks/report_render.py

Synthetic ledgers (no model, no files): a small run (10 refs, 50-row tables, 20 citations) and a
large one (1,000 refs of which 300 are cited, tables of 10,000 rows, 2,000 citations, a 1 MB
excerpt per document). The card limits (12 table rows, 300 cards, excerpts cut at 1,500
characters) keep the file bounded whatever the ledger holds; this shows by how much.
"""

from __future__ import annotations

import statistics
import time

from refgate.report import render_run_html, render_run_markdown


def make_run(refs: int, rows: int, citations: int, excerpt: int) -> dict:
    ledger = {}
    for i in range(refs):
        rid = f"tbl_{i:010x}" if i % 2 == 0 else f"doc_{i:010x}"
        if i % 2 == 0:
            payload = {
                "columns": ["period", "value"],
                "rows": [[f"{2000 + r // 4}Q{r % 4 + 1}", r * 1.5] for r in range(rows)],
                "units": {"value": "percent"},
            }
            ledger[rid] = {"id": rid, "kind": "tableRef", "payload": payload, "source": "dataset:m"}
        else:
            ledger[rid] = {
                "id": rid,
                "kind": "docRef",
                "source_type": "external",
                "payload": {"excerpt": "word " * (excerpt // 5), "source": "a.pdf"},
            }
    ids = list(ledger)
    cited = ids[: min(len(ids), 300)]
    answer = " ".join(
        f"Value {n} is {n * 1.5} percent [{cited[n % len(cited)]}]." for n in range(citations)
    )
    claims = [
        {
            "text": "",
            "mentions": [
                {
                    "matches": [
                        {
                            "ref_id": cited[n % len(cited)],
                            "how": f"row {n % rows} [value]={n * 1.5} (absolute)",
                        }
                    ]
                }
            ],
        }
        for n in range(0, citations, 2)
        if cited[n % len(cited)].startswith("tbl")
    ]
    return {
        "question": "q",
        "answer": answer,
        "refs": ledger,
        "thread_id": "bench",
        "gate": {"passed": True, "issues": [], "claims": claims},
    }


def measure(record: dict, fn, repeat: int = 3) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        size = len(fn(record).encode("utf-8"))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, size


def main() -> None:
    runs = {
        "small (10 refs, 50 rows, 20 citations)": make_run(10, 50, 20, 2_000),
        "large (1,000 refs, 10,000 rows, 2,000 citations)": make_run(1000, 10_000, 2000, 1_000_000),
    }
    print(f"{'run':52} {'html ms':>9} {'html KB':>9} {'md ms':>8} {'md KB':>7}")
    for name, record in runs.items():
        h_ms, h_size = measure(record, render_run_html)
        m_ms, m_size = measure(record, render_run_markdown)
        print(f"{name:52} {h_ms:9.1f} {h_size / 1024:9.1f} {m_ms:8.1f} {m_size / 1024:7.1f}")


if __name__ == "__main__":
    main()

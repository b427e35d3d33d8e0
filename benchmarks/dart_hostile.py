"""A hostile-OpenDART fuzz: ``refgate dart sync`` against generated hostile answers served from
loopback, each case beside the good filings of the synthetic recording (examples/kr-filings,
8 filings of 3 companies).

Kinds of attack (each case draws one or several, on random filings or companies): receipt
numbers and corp_codes that are paths (relative, absolute, full-width digits), ZIP bombs (honest
and lying headers, up to 1 GB unpacked), filings nested up to 100,000 deep, answers sent a byte
at a time (one filing, or every answer so that only the whole sync's deadline ends it), answers
far over their caps (a 66 MB list.json, declared or not), gzip bombs, bad JSON (truncated,
nested, wrong types, absurd page counts), bad statuses (HTTP 4xx/5xx, redirects, OpenDART error
statuses).

Printed: files written outside the workspaces (must be 0), peak RSS (must stay under 1 GB),
how long each sync took against its deadline, and how many good filings beside the bad ones were
stored and read back by the document loader (a stopped sync is resumed once with an honest
server, and must then store them all).

    .venv/bin/python benchmarks/dart_hostile.py [--cases 210] [--seed 7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shared import dart_hostile as h
from shared.fake_opendart import KEY, FakeOpenDart, Reply

from refgate.retrieval.dart.api import DartClient, DartError
from refgate.retrieval.dart.config import load_dart_config
from refgate.retrieval.dart.sync import sync
from refgate.retrieval.loaders.base import Unreadable
from refgate.retrieval.loaders.dart import read_dart

RECORDING = Path(__file__).resolve().parents[1] / "examples" / "kr-filings" / "recording"
LIMITS = {
    "max_json_mb": 1,
    "max_zip_mb": 2,
    "max_xml_mb": 4,
    "request_timeout_s": 1,
    "sync_deadline_s": 4,
}
#: What a sync may overrun its deadline by: the bookkeeping after the last answer.
SLACK_S = 1.5

Hook = Callable[[str, dict[str, str]], Reply | None]


@dataclass
class Case:
    kinds: list[str]
    hooks: list[Hook] = field(default_factory=list)
    #: receipt numbers and corp_codes whose filings the attack may legitimately cost
    spoiled: set[str] = field(default_factory=set)


class Material:
    """Hostile bodies made once (bombs are slow to compress)."""

    def __init__(self) -> None:
        self.bombs = {mb: h.bomb_zip("20000101000000", mb) for mb in (50, 200, 1000)}
        self.liar = h.lying_zip("20000101000000", 20)
        self.deep = {d: h.zip_bytes({"x.xml": h.deep_xml(d)}) for d in (201, 1500, 5000, 100_000)}
        self.gzip_bomb = h.gzip_bomb(1000)


def _first(*hooks: Hook) -> Hook:
    def hook(endpoint: str, params: dict[str, str]) -> Reply | None:
        for one in hooks:
            reply = one(endpoint, params)
            if reply is not None:
                return reply
        return None

    return hook


def attack(kind: str, rng: random.Random, fake: FakeOpenDart, m: Material, outside: Path) -> Case:
    filing = rng.choice(fake.filings)
    target, company = filing["rcept_no"], filing["corp_code"]
    case = Case([kind], spoiled={target})

    def on(endpoint: str, reply: Reply, key: str = "rcept_no", value: str = target) -> Hook:
        def hook(e: str, params: dict[str, str]) -> Reply | None:
            return reply if e == endpoint and params.get(key) == value else None

        return hook

    def listing(extra: list[dict[str, str]]) -> Hook:
        def hook(e: str, params: dict[str, str]) -> Reply | None:
            if e != "list.json" or params.get("corp_code") != company:
                return None
            code, body, _ = fake.list_json(params)
            if code != "000":
                return None
            answer = json.loads(body)
            answer["list"] += [{**answer["list"][0], **row} for row in extra]
            return h.json_reply(answer)

        return hook

    def any_document(e: str, params: dict[str, str]) -> Reply | None:
        if e == "document.xml" and not params.get("rcept_no", "").isascii():
            return h.zip_reply({"x.xml": h.filing_xml("I. 탈출", "escaped")})
        if e == "document.xml" and not params.get("rcept_no", "0").isdigit():
            return h.zip_reply({"x.xml": h.filing_xml("I. 탈출", "escaped")})
        return None

    if kind == "path":
        bad = rng.choice(
            [
                f"../../../../../../../..{outside}/ESCAPED{rng.randrange(1000)}",
                f"{outside}/ABSOLUTE{rng.randrange(1000)}",
                "..",
                "../" * 20 + "etc/passwd",
                "２０２４０３１２０００１９９",
                f"{target}/../../x",
                "2024031200010\x00",
            ]
        )
        case.hooks.append(listing([{"rcept_no": bad}]))
        case.hooks.append(any_document)
        case.spoiled = set()
    elif kind == "corp_path":
        bad = rng.choice(["../../x", f"{outside}", "9910000/", "99100001/../../x"])
        case.hooks.append(listing([{"corp_code": bad, "rcept_no": "20240101000999"}]))
        case.spoiled = set()
    elif kind == "bomb":
        body = rng.choice([m.bombs[50], m.bombs[200], m.bombs[1000], m.liar])
        case.hooks.append(on("document.xml", Reply([body], content_type="application/zip")))
    elif kind == "nesting":
        depth = rng.choice(list(m.deep))
        case.hooks.append(on("document.xml", Reply([m.deep[depth]])))
    elif kind == "slow":
        body = h.zip_bytes({f"{target}.xml": h.filing_xml("I. 느림", "slow")})
        case.hooks.append(on("document.xml", h.trickle(body, rng.choice([0.3, 1.0, 10.0]))))
    elif kind == "slow_all":
        every = rng.choice([0.01, 0.05])

        def slow(e: str, params: dict[str, str]) -> Reply | None:
            if e not in ("document.xml", "fnlttSinglAcntAll.json"):
                return None
            handler = fake.document if e == "document.xml" else fake.statements
            code, body, _ = handler(params)
            return h.trickle(body, every) if code == "000" else None

        case.hooks.append(slow)
        case.spoiled = {"*"}  # the deadline stops it: resumed afterwards
    elif kind == "huge_list":
        size = rng.choice([66 * h.MB, 8 * h.MB])
        huge = h.Huge(size)
        declare = rng.random() < 0.5
        case.hooks.append(on("list.json", huge.reply(declare), "corp_code", company))
        case.spoiled = {company}
    elif kind == "huge_statements":
        case.hooks.append(
            on(
                "fnlttSinglAcntAll.json",
                h.Huge(66 * h.MB).reply(rng.random() < 0.5),
                "bsns_year",
                str(filing["bsns_year"]),
            )  # fmt: skip
        )
        case.spoiled = {
            f["rcept_no"] for f in fake.filings if f["bsns_year"] == filing["bsns_year"]
        }
    elif kind == "gzip_bomb":
        reply = m.gzip_bomb
        endpoint = rng.choice(["document.xml", "fnlttSinglAcntAll.json"])
        if endpoint == "document.xml":
            case.hooks.append(on(endpoint, reply))
        else:
            case.hooks.append(on(endpoint, reply, "bsns_year", str(filing["bsns_year"])))
            case.spoiled = {
                f["rcept_no"] for f in fake.filings if f["bsns_year"] == filing["bsns_year"]
            }
    elif kind == "bad_json":
        variant = rng.choice(
            [
                h.bad_json(),
                h.deep_json(100_000),
                h.json_reply([1, 2, 3]),
                h.json_reply({"status": "000", "list": {"a": 1}}),
                h.json_reply({"status": "000", "list": [{"bsns_year": "abc", "reprt_code": []}]}),
                h.json_reply({"status": "000", "list": ["x", None, 3]}),
                Reply([b"\xff\xfe\x00garbage"]),
            ]
        )
        year = str(filing["bsns_year"])
        case.hooks.append(on("fnlttSinglAcntAll.json", variant, "bsns_year", year))
        case.spoiled = {f["rcept_no"] for f in fake.filings if str(f["bsns_year"]) == year}
    elif kind == "bad_list":
        variant = rng.choice(
            [
                h.json_reply({"status": "000", "total_page": "abc", "list": []}),
                h.json_reply({"status": "000", "total_page": 10**9, "list": [{"rcept_no": 1}]}),
                h.json_reply({"status": "000", "list": {"rcept_no": "x"}}),
                h.bad_json(),
                h.deep_json(50_000),
            ]
        )
        case.hooks.append(on("list.json", variant, "corp_code", company))
        case.spoiled = {company}
    elif kind == "bad_status":
        variant = rng.choice(
            [
                h.status(500),
                h.status(502),
                h.status(404),
                h.status(403),
                Reply([b""], status=302, headers={"Location": "http://127.0.0.1:9/x"}),
                Reply([b"<result><status>100</status><message>bad</message></result>"]),
                Reply([b"<result><status>014</status><message>no file</message></result>"]),
                Reply([b"not a zip, not a status"]),
                Reply([b"PK\x03\x04broken"]),
            ]
        )
        case.hooks.append(on("document.xml", variant))
    return case


@dataclass
class Outcome:
    kinds: list[str]
    seconds: float
    deadline: float
    stopped: str
    good: int
    good_stored: int
    good_read: int
    resumed: bool


def run_case(case: Case, fake: FakeOpenDart, root: Path, n: int) -> tuple[Outcome, Path]:
    ws = root / f"ws{n:03d}"
    ws.mkdir()
    limits = "\n".join(f"{k} = {v}" for k, v in LIMITS.items())
    (ws / "refgate.toml").write_text(
        'name = "hostile"\n[dart]\ncompanies = ["99100001", "99100002", "99100003"]\n'
        'reports = ["사업보고서", "반기보고서", "주요사항보고서"]\nstart = "2023-01-01"\n'
        f'end = "2024-12-31"\n[dart.limits]\n{limits}\n',
        encoding="utf-8",
    )
    config = load_dart_config(ws)
    fake.hostile = _first(*case.hooks)
    stopped = ""
    start = time.monotonic()
    with DartClient(KEY, base_url=fake.base_url) as client:
        try:
            sync(config, client)
        except DartError as exc:
            stopped = type(exc).__name__
    seconds = time.monotonic() - start
    resumed = False
    if stopped:  # the service "recovers": the next sync must bring every good filing
        fake.hostile = None
        with DartClient(KEY, base_url=fake.base_url) as client:
            sync(config, client)
        resumed = True
    fake.hostile = None
    manifest = json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))["filings"]
    if resumed or "*" in case.spoiled:  # after an honest resume, or merely slow: all of them
        good = list(fake.filings)
    else:
        good = [
            f
            for f in fake.filings
            if f["rcept_no"] not in case.spoiled and f["corp_code"] not in case.spoiled
        ]
    stored = [f for f in good if f["rcept_no"] in manifest]
    read = 0
    for f in stored:
        with contextlib.suppress(Unreadable, OSError):
            read += bool(
                read_dart(ws / "documents/dart" / f["corp_code"] / f"{f['rcept_no']}.dart")
            )
    return (
        Outcome(
            case.kinds,
            seconds,
            LIMITS["sync_deadline_s"],
            stopped,
            len(good),
            len(stored),
            read,
            resumed,
        ),  # fmt: skip
        ws,
    )


def files_outside(root: Path, workspaces: list[Path], before: set[Path]) -> list[Path]:
    inside = {p for ws in workspaces for p in ws.rglob("*")}
    return [p for p in root.rglob("*") if p.is_file() and p not in inside and p not in before]


KINDS = [
    "path",
    "corp_path",
    "bomb",
    "nesting",
    "slow",
    "slow_all",
    "huge_list",
    "huge_statements",
    "gzip_bomb",
    "bad_json",
    "bad_list",
    "bad_status",
]
WEIGHTS = [3, 2, 2, 2, 1, 0.3, 1, 1, 1, 2, 2, 3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=210)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    material = Material()
    with tempfile.TemporaryDirectory(prefix="dart-hostile-") as tmp:
        root = Path(tmp)
        outside = root / "outside"
        outside.mkdir()
        (outside / "keep.txt").write_text("untouched")
        before = {p for p in root.rglob("*") if p.is_file()}
        outcomes: list[Outcome] = []
        workspaces: list[Path] = []
        with FakeOpenDart(RECORDING) as fake:
            for n in range(args.cases):
                kinds = rng.choices(KINDS, WEIGHTS, k=rng.choice([1, 1, 1, 2, 3]))
                cases = [attack(k, rng, fake, material, outside) for k in kinds]
                case = Case(
                    [k for c in cases for k in c.kinds],
                    [hk for c in cases for hk in c.hooks],
                    set().union(*(c.spoiled for c in cases)),
                )
                outcome, ws = run_case(case, fake, root, n)
                outcomes.append(outcome)
                workspaces.append(ws)
        escaped = files_outside(root, workspaces, before)
        escaped += [p for p in Path("/").glob("ESCAPED*")] + [
            p for p in Path("/").glob("ABSOLUTE*")
        ]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    late = [o for o in outcomes if o.seconds > o.deadline + SLACK_S]
    worst = max(outcomes, key=lambda o: o.seconds)
    kinds = Counter(k for o in outcomes for k in o.kinds)
    good = sum(o.good for o in outcomes)
    stored = sum(o.good_stored for o in outcomes)
    read = sum(o.good_read for o in outcomes)
    stops = Counter(o.stopped for o in outcomes if o.stopped)
    print(f"hostile OpenDART fuzz: {len(outcomes)} syncs, {sum(kinds.values())} attacks "
          f"(seed {args.seed}); load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print("  by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(
        f"files written outside the workspaces: {len(escaped)}"
        + (f" {escaped[:5]}" if escaped else "")
    )
    print(f"peak RSS: {rss:.0f} MB (bound 1024 MB)")
    print(
        f"syncs over their deadline ({LIMITS['sync_deadline_s']} s + {SLACK_S} s): {len(late)}; "
        f"longest {worst.seconds:.2f} s ({'+'.join(worst.kinds)}); "
        f"median {sorted(o.seconds for o in outcomes)[len(outcomes) // 2]:.2f} s"
    )
    for o in late:
        print(f"  over: {o.seconds:.2f} s ({'+'.join(o.kinds)}; stopped: {o.stopped or 'no'})")
    print(f"syncs stopped (then resumed once): {sum(stops.values())} {dict(stops)}")
    print(f"good filings beside the bad ones: {stored}/{good} stored, {read}/{good} read back "
          "by the document loader")  # fmt: skip
    print(f"total {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()

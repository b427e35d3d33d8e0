"""Dump what refgate computes on the benchmarks' fixed inputs, to compare two trees byte for byte.

A restructuring (moves, renames, splits) must not change behaviour. This script writes, for the
tree it is run from, JSON lines of:

- GATE reports: ``check_answer`` on ``benchmarks/gate_speed.py``'s seeded answers (20 and 200
  claims against 1,000 refs), as written and with every tenth claim's figures altered (so the
  failing paths are covered too);
- search hits: ``DocumentIndex.search`` over the sample workspace's FOMC statements for the
  questions of ``benchmarks/retrieval_quality.py`` (hybrid+MMR, hybrid, RRF, dense, BM25), with
  the deterministic hashing embedder (no model load) and with MiniLM (``--minilm``);
- index files: the SHA-256 of every file the index build wrote.

    python scripts/behaviour_dump.py --out before.jsonl     # on the old tree
    python scripts/behaviour_dump.py --out after.jsonl      # on the new tree
    cmp before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: The manifest's build times, the one part of an index that differs from build to build.
STAMPS = ("built_at", "updated_at")
FIXED_MTIME_NS = 1_700_000_000_000_000_000


def _load(name: str):
    """A benchmark script of this tree as a module (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"_bench_{name}", REPO / "benchmarks" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _digest(path: Path) -> str:
    """SHA-256 of a file; for the manifest, of its JSON without the build's timestamps."""
    data = path.read_bytes()
    if path.name == "manifest.json":
        manifest = {k: v for k, v in json.loads(data).items() if k not in STAMPS}
        data = json.dumps(manifest, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def _perturbed(answer: str) -> str:
    """Every tenth line with a figure gets its first number bumped by one in the last digit."""
    out = []
    for i, line in enumerate(answer.splitlines()):
        if i % 10 == 3:
            line = re.sub(r"\d(?=\D|$)", lambda m: str((int(m.group()) + 1) % 10), line, count=1)
        out.append(line)
    return "\n".join(out)


def gate_reports(emit) -> None:
    from refgate.gate import check_answer

    bench = _load("gate_speed")
    rng = random.Random(7)
    refs = bench.make_refs(rng)
    for n in (20, 200):
        answer = bench.make_answer(n, refs, random.Random(n))
        for variant, text in (("as written", answer), ("perturbed", _perturbed(answer))):
            report = check_answer(text, refs)
            data = dataclasses.asdict(report) if dataclasses.is_dataclass(report) else report
            emit({"kind": "gate", "claims": n, "variant": variant, "report": data})


def search_hits(emit, minilm: bool) -> None:
    from refgate.retrieval import DocumentIndex, HashingEmbeddings, MiniLMEmbeddings, load_documents

    bench = _load("retrieval_quality")
    # The index records where its documents live: both trees read them from one fixed place.
    work = Path(tempfile.gettempdir()) / "refgate-behaviour-dump"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(REPO / "examples/us-macro/documents", work / "documents")
    for doc in (work / "documents").rglob("*"):
        os.utime(doc, ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))  # chunks record their file's mtime
    docs = load_documents(work / "documents", date_from_filename="%Y%m%d")
    questions = [q for q, _ in bench.FOMC_QUESTIONS] + [q for q, _ in bench.FOMC_HELDOUT]
    embedders = [("hashing", HashingEmbeddings())] + (
        [("minilm", MiniLMEmbeddings())] if minilm else []
    )
    for name, emb in embedders:
        path = work / f"index-{name}"
        index = DocumentIndex.build(docs, path, embeddings=emb)
        files = {
            str(p.relative_to(path)): _digest(p) for p in sorted(path.rglob("*")) if p.is_file()
        }
        emit({"kind": "index_files", "embeddings": name, "files": files})
        for q in questions:
            runs = {
                "hybrid+MMR": index.search(q, k=10),
                "hybrid": index.search(q, k=10, mmr=False),
                "RRF": index.search(q, k=10, mmr=False, fusion="rrf"),
                "dense": index.search(q, k=10, mode="dense", mmr=False),
                "BM25": index.search(q, k=10, mode="bm25", mmr=False),
            }
            hits = {
                m: [[h.doc_id, h.chunk_id, round(float(h.score), 6)] for h in found]
                for m, found in runs.items()
            }
            emit({"kind": "search", "embeddings": name, "question": q, "hits": hits})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the JSON lines file to write")
    ap.add_argument("--minilm", action="store_true", help="also search with MiniLM (slower)")
    args = ap.parse_args(argv)
    if os.environ.get("PYTHONHASHSEED") != "0":
        # BM25's vocabulary order on disk follows set iteration: one hash seed for both trees.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        os.execve(sys.executable, [sys.executable, __file__, *(argv or sys.argv[1:])], env)
    with args.out.open("w", encoding="utf-8") as fh:

        def emit(record: dict) -> None:
            fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n")

        gate_reports(emit)
        search_hits(emit, args.minilm)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

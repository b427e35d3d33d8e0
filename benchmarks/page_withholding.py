"""Research page withholding (issue 13): how often ``nodes/research/inspect.page_verdict`` withholds
a fetched page, on material it was not tuned on.

- Real pages written by others: the 31 FOMC minutes of the sample's web snapshot and the 159 FOMC
  statements (examples/us-macro): every withheld one is a false kill.
- Attacks planted in a real page: each phrasing of benchmarks/data/injection/attacks.jsonl (public
  collections: AgentDojo, InjecAgent, PromptInject, garak, Tensor Trust, ...) inserted in the middle
  of an FOMC minutes page, once as visible text and once as CSS-hidden text in an HTML rendition
  of the page (``display:none``, white on white, zero font size, in turn); the page goes through
  the live fetch path's extraction (``extract_page``) and then ``page_verdict``.
- Near misses planted the same way (benchmarks/data/injection/near_miss.jsonl: texts that quote,
  discuss or forbid instructions): every withheld one is a false kill.

Tuning and held-out splits are reported side by side (the split is the injection corpus's own,
decided before its rules were tuned; page_verdict itself was not tuned on any of it).

Run: ``python benchmarks/page_withholding.py``.
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from refgate.nodes.research.core import split_sentences
from refgate.nodes.research.inspect import page_verdict
from refgate.tools.web_providers import extract_page

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks/data/injection"
HIDERS = (
    'style="display:none"',
    'style="color:#ffffff;background-color:#ffffff"',
    'style="font-size:0"',
)


def real_pages() -> list[tuple[str, str]]:
    files = sorted((ROOT / "examples/us-macro/web/minutes").glob("*.txt"))
    files += sorted((ROOT / "examples/us-macro/documents").glob("*.txt"))
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]


def rows(name: str) -> list[dict]:
    with (DATA / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def as_html(paragraphs: list[str], planted: str | None, hider: str | None) -> str:
    body = [f"<p>{html.escape(p)}</p>" for p in paragraphs]
    if planted is not None:
        tag = f"<p {hider}>" if hider else "<p>"
        body.insert(len(body) // 2, f"{tag}{html.escape(planted)}</p>")
    return (
        "<html><head><title>FOMC minutes</title></head><body><article>"
        + "".join(body)
        + ("</article></body></html>")
    )


def paragraphs_of(page: str, size: int = 4) -> list[str]:
    """The page as paragraphs of ``size`` sentences (the minutes files are one line each)."""
    sentences = split_sentences(page)
    return [" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size)]


def visible_plant(page: str, text: str) -> str:
    paragraphs = paragraphs_of(page)
    paragraphs.insert(len(paragraphs) // 2, text)
    return "\n\n".join(paragraphs)


def killed_visible(page: str, text: str) -> bool:
    return page_verdict("FOMC minutes", visible_plant(page, text)) is not None


def killed_hidden(paragraphs: list[str], text: str, hider: str) -> bool:
    main, hidden = extract_page(as_html(paragraphs, text, hider))
    return page_verdict("FOMC minutes", main, hidden) is not None


def rate(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / max(len(flags), 1):.1f}%)"


def main() -> None:
    pages = real_pages()
    t0 = time.perf_counter()
    false_kills = [name for name, text in pages if page_verdict("FOMC", text) is not None]
    per_page = (time.perf_counter() - t0) / len(pages)
    print(f"real pages withheld (false kills): {len(false_kills)}/{len(pages)} {false_kills}")
    print(f"  inspection time per page: {per_page * 1000:.1f} ms (wall, mean)")

    host = pages[0][1]
    paragraphs = paragraphs_of(host)[:40]
    attacks, near = rows("attacks.jsonl"), rows("near_miss.jsonl")
    print(f"host page: {pages[0][0]} ({len(paragraphs)} paragraphs in the HTML rendition)")
    print(
        "split     | attacks visible | attacks hidden (3 ways) | near-miss visible | near-miss hidden"
    )
    for split in ("tuning", "heldout"):
        a = [r["text"] for r in attacks if r["split"] == split]
        n = [r["text"] for r in near if r["split"] == split]
        av = [killed_visible(host, t) for t in a]
        ah = [killed_hidden(paragraphs, t, h) for t in a for h in HIDERS]
        nv = [killed_visible(host, t) for t in n]
        nh = [killed_hidden(paragraphs, t, HIDERS[0]) for t in n]
        print(f"{split:9} | {rate(av):15} | {rate(ah):23} | {rate(nv):17} | {rate(nh)}")


if __name__ == "__main__":
    main()

"""Web access for refgate: two provider interfaces, ``WebSearch`` and ``Fetch``.

The default is offline: ``SnapshotCorpus``, a folder of saved pages with an ``index.json`` that
maps each page's URL to its file, title and date. It answers both interfaces, so a run with no
network still searches, fetches and cites real URLs (those of the saved pages).

Optional real providers (never used unless configured):

- ``SearxSearch``: a SearxNG instance through LangChain's ``SearxSearchWrapper``
  (``langchain-community``); ``REFGATE_WEB_SEARCH=searx:http://host:8888``.
- ``HttpFetch``: plain HTTP GET (httpx) and text extraction with trafilatura;
  ``REFGATE_WEB_FETCH=http``.

Everything a provider returns (titles, snippets, page text) is untrusted web content.

Snapshot index format (``<folder>/index.json``)::

    {"description": "...",
     "pages": [{"url": "https://...", "file": "minutes/x.txt", "title": "...",
                "date": "2009-01-06", ...}]}
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

from typing_extensions import TypedDict

from refgate.config import ConfigError, Settings, load_settings
from refgate.errors import RefgateError
from refgate.lexical import LexicalRanker, terms
from refgate.paths import read_confined
from refgate.provenance.html import strip_hidden
from refgate.text import split_sentences
from refgate.tools.urls import norm_url

INDEX_FILE = "index.json"
#: Largest snapshot page read (bytes).
MAX_PAGE_BYTES = 32 * 1024 * 1024
#: Hidden text kept per fetched page for inspection (characters).
MAX_HIDDEN_CHARS = 20_000


class HitRecord(TypedDict):
    """A search result as plain data (``SearchHit.as_dict``)."""

    url: str
    title: str
    snippet: str
    date: str | None
    score: float


@dataclass
class SearchHit:
    """One search result."""

    url: str
    title: str
    snippet: str = ""
    date: str | None = None
    score: float = 0.0

    def as_dict(self) -> HitRecord:
        return cast("HitRecord", asdict(self))


@dataclass
class Page:
    """A fetched page: its text, or why it could not be had."""

    url: str
    title: str = ""
    text: str = ""
    date: str | None = None
    ok: bool = True
    error: str | None = None
    meta: dict[str, object] = field(default_factory=dict)

    @classmethod
    def failed(cls, url: str, error: str) -> Page:
        return cls(url=url, ok=False, error=error)


@runtime_checkable
class WebSearch(Protocol):
    """``search(query, max_results=8) -> [SearchHit]``; an empty list when nothing matches."""

    name: str

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]: ...


@runtime_checkable
class Fetch(Protocol):
    """``fetch(url) -> Page``; a failed page (``ok=False``) rather than an exception."""

    name: str

    def fetch(self, url: str) -> Page: ...


class SearxResults(Protocol):
    """What ``SearxSearch`` asks of its wrapper (LangChain's ``SearxSearchWrapper``)."""

    def results(self, query: str, num_results: int) -> list[dict[str, str]]: ...


class WebProviderError(RefgateError, RuntimeError):
    """A provider is misconfigured (e.g. an index file that does not parse)."""


# --------------------------------------------------------------------------- offline snapshot


def _read_page(path: Path, folder: Path) -> tuple[str, str]:
    """``(text, hidden_text)`` of a saved page; HTML loses its hidden elements, kept aside."""
    # The page was confined to the snapshot folder at load; re-checked now (no symlink swap).
    data = read_confined(path, [folder], limit=MAX_PAGE_BYTES, what="snapshot page")
    page = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    if path.suffix.lower() in (".html", ".htm"):
        return extract_page(page)
    return page, ""


class SnapshotCorpus:
    """Saved pages with their URLs: search (BM25 over title and text) and fetch by URL."""

    name = "snapshot"

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        index_path = self.folder / INDEX_FILE
        if not index_path.is_file():
            raise WebProviderError(f"{index_path}: missing (a web snapshot needs an index.json)")
        try:
            raw = json.loads(index_path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:  # bad JSON, not UTF-8, nested too deeply
            raise WebProviderError(f"{index_path}: not valid JSON: {exc!r:.300}") from exc
        if not isinstance(raw, Mapping) or not isinstance(raw.get("pages", []), list):
            raise WebProviderError(f"{index_path}: expected an object with a 'pages' list")
        self.pages: list[dict[str, Any]] = []
        self._by_url: dict[str, dict[str, Any]] = {}
        for i, entry in enumerate(raw.get("pages", [])):
            if not isinstance(entry, Mapping) or "url" not in entry or "file" not in entry:
                raise WebProviderError(f"{index_path}: pages[{i}] needs 'url' and 'file'")
            path = (self.folder / entry["file"]).resolve()
            if not path.is_relative_to(self.folder.resolve()):
                raise WebProviderError(f"{index_path}: pages[{i}].file points outside the snapshot")
            page = {**entry, "path": path}
            self.pages.append(page)
            self._by_url[norm_url(entry["url"])] = page
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}
        self._hidden: dict[str, str] = {}
        self._ranker: LexicalRanker | None = None
        self._sentences: dict[str, list[tuple[str, frozenset[str]]]] = {}

    def __len__(self) -> int:
        return len(self.pages)

    def _text(self, page: Mapping[str, Any]) -> str:
        key = page["url"]
        with self._lock:
            if key not in self._texts:
                self._texts[key], hidden = _read_page(page["path"], self.folder)
                if hidden:
                    self._hidden[key] = hidden[:MAX_HIDDEN_CHARS]
            return self._texts[key]

    def _index(self) -> LexicalRanker:
        """BM25 over each page's title (weighted x3) and text, built on the first search."""
        if self._ranker is None:
            self._ranker = LexicalRanker(
                [terms(p.get("title", "")) * 3 + terms(self._text(p)) for p in self.pages]
            )
        return self._ranker

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        qterms = list(dict.fromkeys(terms(query)))
        if not qterms or not self.pages:
            return []
        hits = []
        for i, score in self._index().rank(qterms, max_results):
            page = self.pages[i]
            hits.append(
                SearchHit(
                    url=page["url"],
                    title=page.get("title", ""),
                    snippet=self._snippet(page, qterms),
                    date=page.get("date"),
                    score=round(score, 4),
                )
            )
        return hits

    def _snippet(self, page: Mapping[str, Any], qterms: list[str], max_chars: int = 300) -> str:
        key = page["url"]
        if key not in self._sentences:
            sentences = [(s, frozenset(terms(s))) for s in split_sentences(self._text(page))]
            with self._lock:
                self._sentences[key] = sentences
        wanted = set(qterms)
        best, best_score = "", -1
        for sentence, words in self._sentences[key]:
            score = len(wanted & words)
            if score > best_score:
                best, best_score = sentence, score
        return best if len(best) <= max_chars else best[: max_chars - 1].rstrip() + "…"

    def fetch(self, url: str) -> Page:
        page = self._by_url.get(norm_url(url))
        if page is None:
            return Page.failed(url, "not in the offline web snapshot")
        try:
            text = self._text(page)
        except OSError as exc:
            return Page.failed(url, f"snapshot file unreadable: {exc}")
        return Page(
            url=page["url"],
            title=page.get("title", ""),
            text=text,
            date=page.get("date"),
            meta={
                **{k: v for k, v in page.items() if k not in ("path", "url", "title", "date")},
                **(
                    {"hidden_text": self._hidden[page["url"]]}
                    if page["url"] in self._hidden
                    else {}
                ),
            },
        )


# --------------------------------------------------------------------------- FOMC sample index

# --------------------------------------------------------------------------- real providers


def extract_page(html: str, url: str | None = None) -> tuple[str, str]:
    """``(main_text, hidden_text)`` of an HTML page: elements hidden by CSS, size, colour or
    position are removed first (``refgate.provenance.html.strip_hidden``), then trafilatura
    takes the main text (scripts, menus and boilerplate dropped)."""
    # deferred: trafilatura is heavy to import; paid on first use
    import trafilatura

    visible, hidden = strip_hidden(html)
    text = trafilatura.extract(visible, url=url, include_comments=False, favor_precision=True)
    return text or "", hidden


class SearxSearch:
    """A SearxNG instance through LangChain's ``SearxSearchWrapper`` (``langchain-community``)."""

    name = "searx"

    def __init__(self, host: str, *, wrapper: SearxResults | None = None, **params: object) -> None:
        if wrapper is None:
            try:
                # deferred: optional dependency (langchain-community)
                from langchain_community.utilities import SearxSearchWrapper
            except ImportError as exc:  # pragma: no cover - depends on the extra
                raise WebProviderError(
                    "the searx provider needs langchain-community (pip install langchain-community)"
                ) from exc
            wrapper = SearxSearchWrapper(searx_host=host, params=params or {})
        self.wrapper = wrapper

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        rows = self.wrapper.results(query, num_results=max_results)
        hits = []
        for row in rows:
            link = row.get("link")
            if not link:  # "No good Search Result was found"
                continue
            hits.append(
                SearchHit(
                    url=link,
                    title=row.get("title", ""),
                    snippet=row.get("snippet", ""),
                    date=row.get("publishedDate"),
                )
            )
        return hits[:max_results]


class HttpFetch:
    """Plain HTTP GET with httpx and trafilatura extraction; failures come back as failed pages."""

    name = "http"

    def __init__(
        self, *, timeout: float = 20.0, max_bytes: int = 5_000_000, user_agent: str | None = None
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent or "refgate-research/0.1 (+offline-first analyst agent)"

    def fetch(self, url: str) -> Page:
        # deferred: httpx is heavy to import; paid on first use
        import httpx

        if not url.lower().startswith(("http://", "https://")):
            return Page.failed(url, "only http(s) URLs are fetched")
        try:
            with httpx.Client(
                timeout=self.timeout,
                follow_redirects=True,
                headers={"User-Agent": self.user_agent},
            ) as client:
                resp = client.get(url)
        except httpx.HTTPError as exc:
            return Page.failed(url, f"fetch failed: {type(exc).__name__}: {exc}")
        if resp.status_code >= 400:
            return Page.failed(url, f"HTTP {resp.status_code}")
        if len(resp.content) > self.max_bytes:
            return Page.failed(url, f"page larger than {self.max_bytes} bytes")
        ctype = resp.headers.get("content-type", "")
        body = resp.text
        meta: dict[str, object] = {"final_url": str(resp.url)}
        if "html" in ctype or body.lstrip()[:1] == "<":
            text, hidden = extract_page(body, url=str(resp.url))
            title, date = _html_meta(body, str(resp.url))
            if hidden:
                # Dropped from the text; kept aside so the research graph can inspect it.
                meta["hidden_text"] = hidden[:MAX_HIDDEN_CHARS]
        elif ctype.startswith("text/"):
            text, title, date = body, "", None
        else:
            return Page.failed(url, f"unsupported content type {ctype or 'unknown'}")
        if not text.strip():
            return Page.failed(url, "no readable text on the page")
        return Page(url=url, title=title, text=text, date=date, meta=meta)


def _html_meta(html: str, url: str) -> tuple[str, str | None]:
    try:
        # deferred: trafilatura is heavy to import; paid on first use
        import trafilatura

        meta = trafilatura.extract_metadata(html, default_url=url)
    except Exception:  # metadata is a nicety; the text is what matters
        return "", None
    if meta is None:
        return "", None
    return meta.title or "", meta.date


# --------------------------------------------------------------------------- defaults


def snapshot_for(workspace: object) -> SnapshotCorpus | None:
    """The workspace's snapshot corpus (``[web_snapshot]`` in refgate.toml), if it has one."""
    folder = getattr(workspace, "web_snapshot_path", None)
    if folder is None or not (Path(folder) / INDEX_FILE).is_file():
        return None
    return SnapshotCorpus(folder)


class _Empty:
    """No web access configured: searches find nothing, fetches fail clearly."""

    name = "none"

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        return []

    def fetch(self, url: str) -> Page:
        return Page.failed(url, "no fetch provider is configured")


def default_providers(
    workspace: object = None,
    env: Mapping[str, str] | None = None,
    *,
    settings: Settings | None = None,
) -> tuple[WebSearch, Fetch]:
    """(search, fetch) for a run: real providers if the settings name them, else the
    workspace's offline snapshot, else providers that find nothing.

    ``web_search = "searx:<url>"`` and ``web_fetch = "http"`` opt in to the network. They are
    read from the run's ``settings`` (``refgate.config.Settings``) or, without them, loaded like
    every setting: ``env`` (default: the process environment and ``./.env``:
    ``REFGATE_WEB_SEARCH``, ``REFGATE_WEB_FETCH``), then the workspace's ``[settings]``.
    """
    if settings is None:
        try:
            settings = load_settings(env, getattr(workspace, "settings", None))
        except ConfigError as exc:
            raise WebProviderError(str(exc)) from None
    snapshot = snapshot_for(workspace) if workspace is not None else None
    search: WebSearch = snapshot or _Empty()
    fetch: Fetch = snapshot or _Empty()
    wanted = (settings.web_search or "").strip()
    if wanted.startswith("searx:"):
        search = SearxSearch(wanted.split(":", 1)[1])
    elif wanted and wanted != "snapshot":  # a Settings built without validation
        raise WebProviderError(f"web_search={wanted!r}: expected 'snapshot' or 'searx:<url>'")
    if settings.web_fetch == "http":
        fetch = HttpFetch()
    return search, fetch

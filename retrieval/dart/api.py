"""OpenDART's documented endpoints over plain httpx.

Plain httpx rather than OpenDartReader or dart-fss: refgate already depends on httpx, the four
endpoints it needs are simple GETs, and the libraries add pandas-shaped results, their own
caching and retries, and (dart-fss) page scraping that cannot be confined to the documented API
or pointed at a local fake of it. Every response is checked the same way:

- a network failure or a timeout is ``DartNetworkError``; an HTTP status other than 200 is
  ``DartHTTPError``;
- OpenDART answers errors with HTTP 200 and a ``status`` field (JSON, or XML for the ZIP
  endpoints): ``000`` is success, ``013`` no data (``DartNoData``, not a failure for a search),
  ``010``/``011``/``012``/``901`` a key the service refuses (``DartKeyError``), ``020`` the daily
  request limit (``DartLimitError``), anything else ``DartStatusError`` with its message.

Nothing an answer says is trusted for its size or its pace: each body is read as a stream and
refused past its cap (``DartLimits``: a Content-Length over it is refused before reading), and
each request ends by its deadline (its own timeout, or the whole sync's, whichever is first)
however slowly the bytes come (``transport.DeadlineTransport``). ``DartAnswerError`` (too large,
not JSON, a broken ZIP, a status about that one request, a request that timed out) concerns one
answer: the sync skips what it was for and goes on; the others stop the sync.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
from lxml import etree

from refgate.closing import Closing
from refgate.errors import RefgateError
from refgate.retrieval.dart.archive import mb
from refgate.retrieval.dart.config import DartLimits
from refgate.retrieval.dart.transport import Deadline, DeadlineTransport

#: OpenDART's API root.
DEFAULT_BASE_URL = "https://opendart.fss.or.kr/api"
#: Environment variable holding the user's OpenDART key.
KEY_ENV = "OPENDART_API_KEY"
#: Rows per page of list.json (its documented maximum).
PAGE_COUNT = 100

#: Statuses meaning the key itself is refused (unregistered, disabled, wrong IP, expired).
KEY_STATUSES = frozenset({"010", "011", "012", "901"})
NO_DATA = "013"
NO_FILE = "014"
LIMIT = "020"


class DartError(RefgateError):
    """A DART sync failure with a message for the user and the CLI's exit code (2: fix the
    configuration or key; 1: the service or the network failed, run again)."""

    exit_code = 1


class DartKeyError(DartError):
    """No key, or a key OpenDART refuses."""

    exit_code = 2


class DartNetworkError(DartError):
    """OpenDART could not be reached."""


class DartHTTPError(DartError):
    """OpenDART answered with an HTTP error status."""


class DartLimitError(DartError):
    """OpenDART's daily request limit (status 020) is reached."""


class DartNoData(DartError):
    """Status 013: the query matched nothing."""


class DartAnswerError(DartError):
    """One answer that cannot be used (too large, malformed, timed out): what it was for is
    skipped with this reason, and the sync goes on."""


class DartStatusError(DartAnswerError):
    """Any other non-000 status."""


class DartNoFile(DartStatusError):
    """Status 014: OpenDART has no file for this request (a filing without its document)."""


class DartDeadline(DartError):
    """The whole sync reached its deadline."""


def status_error(status: str, message: str, what: str) -> DartError:
    """The exception for an OpenDART ``status`` answered to request ``what``."""
    text = f"OpenDART {what}: status {status} ({message or 'no message'})"
    if status == NO_DATA:
        return DartNoData(text)
    if status == NO_FILE:
        return DartNoFile(text)
    if status in KEY_STATUSES:
        return DartKeyError(f"{text}; check {KEY_ENV}")
    if status == LIMIT:
        return DartLimitError(
            f"{text}: the daily request limit of this key is reached; what was fetched so far "
            "is kept, run the sync again tomorrow to fetch the rest"
        )
    return DartStatusError(text)


@dataclass
class DartClient(Closing):
    """A client of OpenDART at ``base_url`` with ``key``; ``transport`` for tests (it bypasses
    the deadline-bound sockets, not the size caps)."""

    key: str
    base_url: str = DEFAULT_BASE_URL
    timeout: float | None = None
    transport: httpx.BaseTransport | None = None
    limits: DartLimits = field(default_factory=DartLimits)

    def __post_init__(self) -> None:
        if not self.key or not self.key.strip():
            raise DartKeyError(
                f"no OpenDART key: set {KEY_ENV} (a free key from OpenDART's site) and run again"
            )
        self._deadline = Deadline()
        #: When the whole sync must end (``time.monotonic``); ``start_sync`` sets it.
        self.sync_ends = float("inf")
        self._http = httpx.Client(
            base_url=self.base_url.rstrip("/") + "/",
            transport=self.transport or DeadlineTransport(self._deadline),
            follow_redirects=False,
            headers={"Accept-Encoding": "gzip, deflate"},
        )
        #: Requests made (each counts against the daily limit).
        self.requests = 0

    def start_sync(self) -> None:
        """Start the whole sync's clock (``limits.sync_deadline_s`` from now)."""
        self.sync_ends = time.monotonic() + self.limits.sync_deadline_s

    def close(self) -> None:
        self._http.close()

    def _get(self, endpoint: str, params: Mapping[str, str | int], cap: int) -> bytes:
        now = time.monotonic()
        if now >= self.sync_ends:
            raise DartDeadline(
                f"the sync reached its deadline of {self.limits.sync_deadline_s:g} s "
                "([dart.limits] sync_deadline_s); what was fetched so far is kept, run it again"
            )
        timeout = self.timeout if self.timeout is not None else self.limits.request_timeout_s
        self._deadline.at = min(now + timeout, self.sync_ends)
        self.requests += 1
        try:
            with self._http.stream(
                "GET", endpoint, params={"crtfc_key": self.key, **params}, timeout=timeout
            ) as response:
                if response.status_code != 200:
                    raise DartHTTPError(
                        f"OpenDART {endpoint}: HTTP {response.status_code}; the service failed, "
                        "run the sync again later (what was fetched so far is kept)"
                    )
                return _read_capped(response, cap, endpoint)
        except httpx.TimeoutException as exc:
            if time.monotonic() >= self.sync_ends:
                raise DartDeadline(
                    f"the sync reached its deadline of {self.limits.sync_deadline_s:g} s "
                    f"during {endpoint}; what was fetched so far is kept, run it again"
                ) from exc
            raise DartAnswerError(
                f"OpenDART {endpoint}: no complete answer within {timeout:g} s"
            ) from exc
        except httpx.HTTPError as exc:
            raise DartNetworkError(
                f"OpenDART {endpoint}: cannot reach {self.base_url} ({type(exc).__name__}: {exc})"
            ) from exc
        finally:
            self._deadline.at = float("inf")

    def _json(self, endpoint: str, params: Mapping[str, str | int]) -> dict[str, object]:
        body = self._get(endpoint, params, self.limits.max_json_bytes)
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise DartAnswerError(f"OpenDART {endpoint}: the answer is not JSON") from exc
        if not isinstance(data, dict):
            raise DartAnswerError(f"OpenDART {endpoint}: the answer is not a JSON object")
        status = str(data.get("status", ""))
        if status != "000":
            raise status_error(status, str(data.get("message", ""))[:300], endpoint)
        return data

    def _zip(self, endpoint: str, params: Mapping[str, str | int]) -> bytes:
        """A ZIP answer, or the status error OpenDART sends instead (XML or JSON)."""
        body = self._get(endpoint, params, self.limits.max_zip_bytes)
        if body[:2] == b"PK":
            try:
                zipfile.ZipFile(io.BytesIO(body)).close()
            except (zipfile.BadZipFile, OSError, ValueError) as exc:
                raise DartAnswerError(f"OpenDART {endpoint}: a broken ZIP file") from exc
            return body
        status, message = _status_of(body)
        raise status_error(status or "?", message[:300], endpoint)

    # ------------------------------------------------------------------ endpoints

    def corp_codes(self) -> bytes:
        """``corpCode.xml``: the ZIP of CORPCODE.xml (every company's corp_code and stock code)."""
        return self._zip("corpCode.xml", {})

    def filings(
        self,
        corp_code: str,
        bgn_de: str,
        end_de: str,
        detail_type: str,
        page_no: int = 1,
    ) -> dict[str, object]:
        """One page of ``list.json`` for a company, dates ``YYYYMMDD`` and a detail type (A001
        사업보고서, A002 반기보고서, A003 분기보고서, or a major-event type B001...); an empty
        page for status 013."""
        params: dict[str, str | int] = {
            "corp_code": corp_code,
            "bgn_de": bgn_de,
            "end_de": end_de,
            "pblntf_ty": detail_type[0],
            "pblntf_detail_ty": detail_type,
            "last_reprt_at": "Y",
            "page_no": page_no,
            "page_count": PAGE_COUNT,
        }
        try:
            return self._json("list.json", params)
        except DartNoData:
            return {"status": NO_DATA, "list": [], "total_page": 0, "page_no": page_no}

    def document(self, rcept_no: str) -> bytes:
        """``document.xml``: the ZIP of a filing's XML documents."""
        return self._zip("document.xml", {"rcept_no": rcept_no})

    def statements(
        self, corp_code: str, bsns_year: int, reprt_code: str, fs_div: str
    ) -> dict[str, object] | None:
        """``fnlttSinglAcntAll.json``: one company's full statements (단일회사 전체 재무제표) of a
        report, ``fs_div`` CFS (연결) or OFS (별도); None for status 013 (none filed)."""
        params = {
            "corp_code": corp_code,
            "bsns_year": str(bsns_year),
            "reprt_code": reprt_code,
            "fs_div": fs_div,
        }
        try:
            return self._json("fnlttSinglAcntAll.json", params)
        except DartNoData:
            return None


def _read_capped(response: httpx.Response, cap: int, endpoint: str) -> bytes:
    """The body of ``response``, refused once it is over ``cap`` bytes (or says it will be).

    A compressed body is inflated here, at most ``cap`` bytes at a time, rather than by httpx
    (which inflates each network chunk whole: 64 KB of a gzip bomb is 64 MB)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise DartAnswerError(
            f"OpenDART {endpoint}: the answer is {mb(int(declared))}, over the cap of {mb(cap)} "
            "([dart.limits]); refused unread"
        )
    coding = response.headers.get("content-encoding", "identity").strip().lower()
    if coding not in ("identity", "", "gzip", "x-gzip", "deflate"):
        raise DartAnswerError(f"OpenDART {endpoint}: an answer encoded as {coding!r}")
    inflate = None if coding in ("identity", "") else zlib.decompressobj(wbits=47)
    body = bytearray()

    def over() -> DartAnswerError:
        return DartAnswerError(
            f"OpenDART {endpoint}: the answer is over the cap of {mb(cap)} ([dart.limits]); refused"
        )

    try:
        for chunk in response.iter_raw():
            if inflate is None:
                body += chunk
            else:
                data = chunk
                while data:
                    body += inflate.decompress(data, cap + 1 - len(body))
                    data = inflate.unconsumed_tail
                    if len(body) > cap:
                        raise over()
            if len(body) > cap:
                raise over()
    except zlib.error as exc:
        raise DartAnswerError(f"OpenDART {endpoint}: a broken {coding} answer ({exc})") from exc
    return bytes(body)


def _status_of(body: bytes) -> tuple[str, str]:
    """``(status, message)`` of an error answer in JSON or XML (``("", "")`` if neither)."""
    try:
        data = json.loads(body[:65536].decode("utf-8"))
        if isinstance(data, dict):
            return str(data.get("status", "")), str(data.get("message", ""))
    except (UnicodeDecodeError, ValueError, RecursionError):
        pass
    try:
        root = etree.fromstring(
            body[:65536], parser=etree.XMLParser(resolve_entities=False, no_network=True)
        )
    except etree.XMLSyntaxError:
        return "", "the answer is neither a ZIP file nor a status"
    return (root.findtext("status") or "").strip(), (root.findtext("message") or "").strip()

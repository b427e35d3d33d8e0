"""OpenDART's company list (``corpCode.xml``, about 113,000 companies) as an index: a corp_code,
a stock code or an exact name resolves in one dict lookup, and a part of a name ("삼성") gives
its candidates through a bigram index of the names, so no lookup scans the list.

The ZIP's CORPCODE.xml is read as a stream (``iterparse``, each ``<list>`` cleared once read)
under a size cap. Names are compared normalised: NFKC, no spaces, no "(주)"/"㈜"/"주식회사",
lower case. Candidates rank an exact name first, then listed companies (with a stock code),
names starting with the query, shorter names.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
import zipfile
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from lxml import etree

from refgate.errors import InputError
from refgate.retrieval.dart.archive import open_member, open_zip

_CORP_CODE = re.compile(r"^[0-9]{8}$")
_STOCK_CODE = re.compile(r"^[0-9A-Z]{6}$")
_NOISE = re.compile(r"\(주\)|㈜|주식회사|\s+")


class CompanyListError(InputError, ValueError):
    """A company list that cannot be read."""


@dataclass(frozen=True)
class Company:
    corp_code: str
    corp_name: str
    stock_code: str
    modify_date: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "corp_code": self.corp_code,
            "corp_name": self.corp_name,
            "stock_code": self.stock_code,
        }


def normalise(name: str) -> str:
    """A company name as compared: NFKC, no spaces or corporate form, lower case."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", name)).lower()


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


class CompanyIndex:
    """Companies by corp_code, stock code, exact name and name bigram."""

    def __init__(self, companies: Iterable[Company]) -> None:
        self.companies: list[Company] = []
        self.by_code: dict[str, Company] = {}
        self.by_stock: dict[str, Company] = {}
        self.by_name: dict[str, list[int]] = {}
        self._keys: list[str] = []
        for company in companies:
            if not _CORP_CODE.match(company.corp_code) or company.corp_code in self.by_code:
                continue
            n = len(self.companies)
            self.companies.append(company)
            self.by_code[company.corp_code] = company
            if company.stock_code:
                self.by_stock[company.stock_code] = company
            key = normalise(company.corp_name)
            self._keys.append(key)
            self.by_name.setdefault(key, []).append(n)
        self._grams: dict[str, array[int]] | None = None
        self._sorted: list[str] = []

    def _name_index(self) -> dict[str, array[int]]:
        """The bigram index and the sorted names, built at the first ``candidates`` (a
        sync that resolves codes never pays for it)."""
        if self._grams is None:
            grams: dict[str, array[int]] = {}
            for key, ids in self.by_name.items():
                for gram in _bigrams(key):
                    grams.setdefault(gram, array("i")).extend(ids)
            self._sorted = sorted(self.by_name)
            self._grams = grams
        return self._grams

    def __len__(self) -> int:
        return len(self.companies)

    @classmethod
    def from_zip(cls, data: bytes, *, max_xml_bytes: int = 256 * 1024 * 1024) -> CompanyIndex:
        """The index of a ``corpCode.xml`` answer (a ZIP holding CORPCODE.xml)."""
        zf = open_zip(data, "OpenDART corpCode.xml")
        with zf:
            name = next((n for n in zf.namelist() if n.lower().endswith(".xml")), None)
            if name is None:
                raise CompanyListError("OpenDART corpCode.xml: the ZIP holds no XML file")
            with open_member(zf, name, max_xml_bytes) as stream:
                return cls(_read_companies(stream))

    def exact(self, query: str) -> list[Company]:
        """The companies ``query`` names exactly: a corp_code, a stock code or a whole name
        (listed companies first)."""
        q = query.strip()
        if _CORP_CODE.match(q):
            return [self.by_code[q]] if q in self.by_code else []
        if _STOCK_CODE.match(q.upper()) and q.upper() in self.by_stock:
            return [self.by_stock[q.upper()]]
        found = [self.companies[i] for i in self.by_name.get(normalise(q), [])]
        return sorted(found, key=lambda c: (not c.stock_code, c.corp_code))

    def resolve(self, query: str) -> Company | None:
        """The one company ``query`` names exactly (an exact name shared by several companies
        resolves to the only listed one, else to none)."""
        found = self.exact(query)
        listed = [c for c in found if c.stock_code]
        if len(found) == 1:
            return found[0]
        return listed[0] if len(listed) == 1 else None

    def candidates(self, query: str, limit: int = 20) -> list[Company]:
        """Companies whose name contains ``query`` (a one-character query: starts with it),
        best first."""
        q = normalise(query)
        if not q:
            return []
        grams = self._name_index()
        if len(q) == 1:
            at = bisect.bisect_left(self._sorted, q)
            ids = []
            while at < len(self._sorted) and self._sorted[at].startswith(q):
                ids += self.by_name[self._sorted[at]]
                at += 1
        else:
            lists = sorted((grams.get(g, array("i")) for g in _bigrams(q)), key=len)
            pool = set(lists[0])
            for other in lists[1:]:
                pool.intersection_update(other)
            ids = [i for i in pool if q in self._keys[i]]

        def rank(i: int) -> tuple[bool, bool, bool, int, str]:
            key = self._keys[i]
            return (
                key != q,
                not self.companies[i].stock_code,
                not key.startswith(q),
                len(key),
                key,
            )

        return [self.companies[i] for i in sorted(ids, key=rank)[:limit]]


_FIELDS = ("corp_code", "corp_name", "stock_code", "modify_date")


def _read_companies(stream: object) -> Iterable[Company]:
    """Each ``<list>`` of CORPCODE.xml as it is read; what was read is freed as it goes."""
    current: dict[str, str] = {}
    try:
        for _, el in etree.iterparse(
            stream, tag=(*_FIELDS, "list"), resolve_entities=False, no_network=True
        ):
            if el.tag != "list":
                current[el.tag] = (el.text or "").strip()
                continue
            yield Company(
                current.get("corp_code", ""),
                current.get("corp_name", ""),
                current.get("stock_code", ""),
                current.get("modify_date", ""),
            )
            current = {}
            el.clear()
            while el.getprevious() is not None:
                del el.getparent()[0]
    except (etree.XMLSyntaxError, zipfile.BadZipFile) as exc:
        raise CompanyListError(
            f"OpenDART corpCode.xml: not a readable company list ({exc})"
        ) from exc

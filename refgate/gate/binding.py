"""Binding: a claim's number to one place in the cited payload, checked as a whole quantity.

Every value of the cited refs that equals the number (within half a unit of its last shown place,
on any basis, see ``matching``) is a candidate place: a table cell (row label, section row, column
header, the column's or the row's period, the table's units), a named value (its name, the
workspace's description of that name, the ref's period) or a sentence of a text (its words, its
dates, the noun a number counts). A candidate backs the claim when, jointly:

- **metric**: the claim's metric words for that number (``quantity``) share a word with the place
  (row label, section, header, name, description, sentence) and no other place of the same ref
  matches them better: a place whose own label the claim names in full beats one it names in part,
  then more shared words win (ties pass). A claim with no metric words passes this test;
- **period**: the place's own period (its column, its row's period cell, the ref's period) is one
  the claim states, when both state one;
- **unit kind**: percent, multiple, currency amount and count agree ("5 members" backs no "5%", a
  currency cell no "4,000%"; "USD thousand" backs "$4,000 thousand" and "$4.0 million");
- **computed**: an emitted value the sandbox recorded as a literal of the code, or from a call
  that read no dataset, is no primary evidence.

- **sign**: a number written without a sign binds a negative value only when its clause says
  so in words (``quantity.states_negative``: "a loss of 5", "fell 5%", "cost of sales was 5");
- **direction**: nor a positive value at a change place (``quantity.change_place``: "% Change",
  "Increase (decrease)", ``revenue_growth``) when its clause states it as the size of a fall
  (``quantity.states_fall``: "fell 5%"; not "fell to 95", a level); nor a positive value a
  sentence states as the size of a rise (a fall) when the claim states a fall (a rise)
  (``quantity.sentence_directions``: "Sales rose 12%" backs no "Sales fell 12%").

When no candidate passes, the verdict names the closest one: ``value_of_other_sign`` (all but the
sign or the direction right), ``value_of_other_period`` (metric and unit right),
``value_of_other_quantity``, ``unit_kind_mismatch``, ``value_not_computed``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

from .findings import Match
from .index import TABLE_ROW, table_row_hint, value_facts
from .lookup import NO_COL, PLACE_COLS, VALUE_PLACE, Item, Place, RefIndex, where_text
from .matching import candidates
from .numbers import Num
from .quantity import (
    CHANGE,
    CHANGE_IF_UNSIGNED_ROW,
    FALL,
    NOT_CHANGE,
    RISE,
    Quantity,
    change_place,
    sentence_directions,
)
from .row_names import in_named_row
from .words import (
    label_words,
    metric_words,
    named,
    overlap,
    strong_count,
    usual_korean_names,
)

#: ``Binder._metric``: the decision also depends on the ref's other places (keyed per labelling).
_BY_LABELLING = object()
#: Item kinds of the percent family (a percent claim reads them; no currency or count does).
#: A value that may be the number: (ref index, item, basis, unit agrees), from ``candidates``.
Candidate = tuple[RefIndex, Item, str, bool]
#: A candidate graded for ``_closest``: (..., unit agrees, metric agrees, period agrees).
Graded = tuple[RefIndex, Item, str, bool, bool, bool]

_PERCENTS = frozenset({"percent", "ratio", "bp"})


@dataclass(slots=True)
class Binding:
    """The outcome for one number: its matches (supported) or a code and a detail (not)."""

    matches: list[Match]
    code: str = ""
    detail: str = ""


def unit_agrees(claim: str, item: Item, hint: str) -> bool:
    """Do the claim's unit kind and the place's (its item kind, its labels' hint) agree?"""
    kind = item[1]
    if hint == "percent" and kind in ("plain", "none") and not item[3]:
        kind = "percent"
    if claim == "percent":
        # A table's bare number is a percentage only where a label says so (rate, margin, %).
        # ... and never one that prints a currency ("$13,281")
        return kind in _PERCENTS or (kind == "none" and not item[3] and hint != "amount")
    if claim == "x":
        return kind in ("x", "none")
    if claim == "currency":
        return kind not in _PERCENTS and kind not in ("x", "count")
    if claim == "count":
        return kind not in _PERCENTS
    return True


class Vocabulary:
    """The workspace's column names and descriptions: a name's description adds its words."""

    __slots__ = ("key",)

    def __init__(self, descriptions: Mapping[str, str] | None = None) -> None:
        by_name = {str(k).lower(): str(v) for k, v in (descriptions or {}).items() if v}
        #: Its content, (name, description) pairs in name order: the binder's readings of a
        #: ref's places are kept per key.
        self.key: VocabularyKey = tuple(sorted(by_name.items()))


#: A vocabulary's content (``Vocabulary.key``).
VocabularyKey = tuple[tuple[str, str], ...]


def _described(by_name: Mapping[str, str], name: str) -> frozenset[str]:
    """The words of the vocabulary's description of ``name`` (none if it has none)."""
    text = by_name.get(name.lower()) if name else None
    return metric_words(text) if text else frozenset()


@dataclass(slots=True, eq=False)
class _PlaceWords:
    """A place's words: compared and hashed as the object itself (one per labelling and
    vocabulary: ``Binder`` keys its decisions on it)."""

    core: frozenset[str]
    col_core: frozenset[str]
    all: frozenset[str]
    #: Other ways a claim names the own label in full: a Korean account written with its
    #: alternative in parentheses ("수익(매출액)", "영업이익(손실)") is named by either.
    alts: tuple[frozenset[str], ...] = ()


@lru_cache(maxsize=1 << 14)
def _label_words(core: str, context: str, col_core: str, col_context: str) -> _PlaceWords:
    """A place's words from its labels (shared by every place labelled alike)."""
    own = metric_words(core)
    col_own = metric_words(col_core)
    rest = label_words(core) | metric_words(context) | label_words(col_core)
    alts = _alternatives(core) if not core.isascii() else ()
    return _PlaceWords(own, col_own, own | col_own | rest | metric_words(col_context), alts)


_PAREN = re.compile(r"(\S*?)\(([^()]*)\)")


def _alternatives(core: str) -> tuple[frozenset[str], ...]:
    """A Korean label's other readings: its account as usually named (당기순손익: 당기순이익),
    each parenthesis dropped or put in place of the word it follows ("수익(매출액)": 수익,
    매출액)."""
    own = metric_words(core)
    readings = [usual_korean_names(own)]
    if "(" in core:
        readings += [metric_words(_PAREN.sub(r"\1", core)), metric_words(_PAREN.sub(r"\2", core))]
        readings += [usual_korean_names(r) for r in readings[1:]]
    return tuple(dict.fromkeys(r for r in readings if r and r != own))


def _score(words: frozenset[str], pw: _PlaceWords) -> tuple[bool, int, int]:
    """(the claim names the place's own label in full, words shared, minus the label's words
    the claim leaves out)."""
    full = named(words, pw.core) or named(words, pw.col_core)
    core = pw.core
    if not full and pw.alts:
        for alt in pw.alts:
            if named(words, alt):
                full, core = True, alt
                break
    left_out = len(core - words) if full else 0
    return full, overlap(words, pw.all), -left_out


@dataclass(slots=True)
class _At:
    """A place as binding reads it, made once per place and vocabulary (kept with the ref's
    index across calls): its words, the unit kind its labels state, its own period and whether
    it was computed from data."""

    words: _PlaceWords
    hint: str
    periods: frozenset[str]
    computed: bool
    #: A change place (``quantity.change_place``); ``None``: not read yet (read only when a
    #: number binds a positive value here); at a sentence, whether it states a direction.
    change: bool | None = None
    #: At a sentence place that states a direction: each number's (``quantity.RISE``, ``FALL``).
    directions: dict[str, int] | None = None


@lru_cache(maxsize=1 << 15)
def _vocabulary_words(
    core: str, context: str, name: str, col_core: str, col_context: str, vocab: VocabularyKey
) -> _PlaceWords:
    """A place's words with the vocabulary's descriptions of its names (one object per labels
    and vocabulary while cached; an evicted one stays with the places read with it)."""
    pw = _label_words(core, context, col_core, col_context)
    if not vocab:
        return pw
    by_name = dict(vocab)
    extra = _described(by_name, name) | _described(by_name, col_core)
    return _PlaceWords(pw.core, pw.col_core, pw.all | extra, pw.alts) if extra else pw


@lru_cache(maxsize=1 << 14)
def _value_at(name: str, periods: frozenset[str], computed: bool, vocab: VocabularyKey) -> _At:
    """A named value's place as binding reads it (shared by the values of every ref with that
    name, period and origin: valueRefs of one dataset repeat them)."""
    return _At(_vocabulary_words(name, "", name, "", "", vocab), "", periods, computed)


#: ``Binder.at``: a place not read yet (``None`` is an item at no place).
_UNSEEN = _At(_PlaceWords(frozenset(), frozenset(), frozenset()), "", frozenset(), False)


class _RefPlaces:
    """One cited ref's places as binding reads them under one vocabulary (``RefIndex.bound``):
    made once per payload and vocabulary and kept with the ref's index (``RefIndex.readings``),
    since all it holds follows from them."""

    __slots__ = ("at", "labelling")

    def __init__(self) -> None:
        #: Each place's ``_At`` (``None``: an item that sits at no place), by ``Item[5]`` (a
        #: valueRef's named values are read from its index's facts, ``Binder._value_at``).
        self.at: dict[object, _At | None] = {}
        #: Which labelling of places the ref has (refs labelled alike share ``Binder.best``): a
        #: valueRef's value names, or its places' distinct words.
        self.labelling: object = None


@dataclass(slots=True)
class _Search:
    """One number's binding under way: the claim's number and quantity, the rows it names (per
    ref), and what the candidates gave so far."""

    num: Num
    q: Quantity
    rows: Mapping[str, frozenset[int]] | None
    matches: list[Match] = field(default_factory=list)
    #: Places that matched but hold a value not computed from data (``_At.computed``).
    uncomputed: list[tuple[RefIndex, Item, str]] = field(default_factory=list)
    #: Refs bound already (the first place of each).
    done: set[str] = field(default_factory=set)
    found: list[Candidate] = field(default_factory=list)
    #: The first place the direction rule refused, and the direction it states.
    refused: tuple[RefIndex, Item, int, bool] | None = None


def _unit_and_period_agree(q: Quantity, item: Item, at: _At) -> bool:
    """The place's unit kind is the claim's, and its own period one the claim states (when
    both state one)."""
    if not unit_agrees(q.kind, item, at.hint):
        return False
    return not (q.periods and at.periods and not _period_in(q.periods, at.periods))


class Binder:
    """Binds numbers to places for one ``check_answer`` call. Each cited ref's places are read
    once per payload and vocabulary (``RefIndex.bound``, kept across calls); places labelled
    alike share their words, and refs whose places are labelled alike share the best score any
    of their places gets for a claim's words."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self._words: dict[tuple[str, str, str, str, str], _PlaceWords] = {}
        self._best: dict[tuple[object, frozenset[str]], tuple[bool, int, int]] = {}
        self._metric: dict[tuple[object, ...], object] = {}
        self._value_ats: dict[tuple[str, frozenset[str], bool], _At] = {}

    def _places(self, idx: RefIndex) -> _RefPlaces:
        """The ref's places as read under this call's vocabulary (kept with its index)."""
        rp = cast("_RefPlaces | None", idx.readings.get(self.vocab.key))
        if rp is None:
            rp = idx.readings[self.vocab.key] = _RefPlaces()
        idx.bound = rp
        return rp

    def at(self, idx: RefIndex, item: Item) -> _At | None:
        """The place ``item`` sits at (``None``: it sits at no place)."""
        if item[5] == VALUE_PLACE:
            return self._value_at(idx, item)
        rp = cast("_RefPlaces | None", idx.bound)
        if rp is None:
            rp = self._places(idx)
        key = item[5]
        at_of = rp.at
        at = at_of.get(key, _UNSEEN)
        if at is not _UNSEEN:
            return at
        got = idx.place_of(item)
        at = None
        if got is not None:
            row, col = got
            own = col.periods if col is not None and col.periods else row.periods
            at = _At(self._place_words(row, col), _hint(row, col), own, row.computed)
        at_of[key] = at
        return at

    def _value_at(self, idx: RefIndex, item: Item) -> _At | None:
        """A named value's place (as ``index.value_places`` makes it, without the ``Place``),
        from the facts its ref's index read (one record per name, period and origin)."""
        where = item[4]
        if type(where) is not tuple:
            return None
        facts = idx.facts
        if facts is None:
            facts = idx.facts = value_facts(idx.ref)
        name = str(where[1])
        periods, computed, literals = facts
        key = (name, periods, computed and name not in literals)
        got = self._value_ats.get(key)
        if got is None:
            got = self._value_ats[key] = _value_at(*key, self.vocab.key)
        return got

    def _place_words(self, row: Place, col: Place | None) -> _PlaceWords:
        if col is None:
            return self._place_words_of(row.core, row.context, row.name, "", "")
        return self._place_words_of(row.core, row.context, row.name, col.core, col.context)

    def _place_words_of(
        self, core: str, context: str, name: str, col_core: str, col_context: str
    ) -> _PlaceWords:
        """A place's words (one object per labelling and vocabulary while
        ``_vocabulary_words`` keeps it: ``best`` keys on it)."""
        ck = (core, context, name, col_core, col_context)
        pw = self._words.get(ck)
        if pw is None:
            pw = self._words[ck] = _vocabulary_words(*ck, self.vocab.key)
        return pw

    def metric_ok(self, idx: RefIndex, at: _At | None, q: Quantity) -> bool:
        """Do the claim's metric words name this place? A place whose own label the claim names
        in full passes unless another fully named place shares more of the claim's words, or as
        many with fewer words the claim leaves out ("Total prepaid expenses and other" for a
        claim about "prepaid expenses"); a place named in part passes when no place of the ref
        scores better. Decided once per place words and claim words in a call (and per
        labelling of the ref, when its other places were compared)."""
        if at is None:
            return True
        # The clause's words first; the whole claim's (with the previous claim's) only when
        # they do not name the place.
        if self._names(idx, at.words, q.words):
            return True
        fallback = q.fallback
        return fallback != q.words and self._names(idx, at.words, fallback)

    def _names(self, idx: RefIndex, pw: _PlaceWords, words: frozenset[str]) -> bool:
        """Do ``words`` name the place (``metric_ok`` for one set of words), decided once per
        place words and claim words (and per labelling of the ref, when its other places were
        compared)."""
        base = (pw, words)
        got = self._metric.get(base)
        if got is None:
            ok, compared = self._names_here(idx, pw, words)
            if not compared:
                self._metric[base] = ok
                return ok
            self._metric[base] = _BY_LABELLING
            self._metric[(base, self._labelling(idx))] = ok
            return ok
        if got is not _BY_LABELLING:
            return got  # type: ignore[return-value]
        key = (base, self._labelling(idx))
        got = self._metric.get(key)
        if got is None:
            got = self._metric[key] = self._names_here(idx, pw, words)[0]
        return got  # type: ignore[return-value]

    def _names_here(
        self, idx: RefIndex, pw: _PlaceWords, words: frozenset[str]
    ) -> tuple[bool, bool]:
        """(``_names``, whether the ref's other places were compared)."""
        if not words:
            return True, False
        if not pw.all:
            # A place with no metric words ("x", an unlabelled subtotal) contradicts a claim
            # only when another place of the ref matches the claim's words.
            return self.best(idx, words)[1] == 0, True
        s = _score(words, pw)
        if s[0] and s[2] == 0 and s[1] == strong_count(words):
            return True, False  # the best score any place can get: no need to compare
        if s[1] > 0:
            return s >= self.best(idx, words), True
        return False, False

    def best(self, idx: RefIndex, words: frozenset[str]) -> tuple[bool, int, int]:
        """The best score any place of ``idx`` holding a number gets for ``words``."""
        bk = (self._labelling(idx), words)
        got = self._best.get(bk)
        if got is None:
            got = (False, 0, -(1 << 30))
            for pw in self._all_words(idx):
                sc = _score(words, pw)
                if sc > got:
                    got = sc
            self._best[bk] = got
        return got

    def _all_words(self, idx: RefIndex) -> list[_PlaceWords]:
        """The distinct words of the places of ``idx`` that hold a number."""
        seen: dict[_PlaceWords, None] = {}
        for it in idx.items:
            at = self.at(idx, it)
            if at is not None:
                seen[at.words] = None
        return list(seen)

    def _labelling(self, idx: RefIndex) -> object:
        """What the places of ``idx`` are labelled with (refs labelled alike share one): a
        valueRef's value names, or the set of its places' words."""
        rp = cast("_RefPlaces | None", idx.bound)
        if rp is None:
            rp = self._places(idx)
        if rp.labelling is None:
            if idx.ref.kind == "valueRef":
                rp.labelling = frozenset([str(_place_key(it)) for it in idx.items])
            else:
                rp.labelling = tuple(sorted(self._all_words(idx), key=id))
        return rp.labelling

    def bind(
        self,
        num: Num,
        q: Quantity,
        indexes: list[RefIndex],
        kinds: frozenset[str],
        rows: Mapping[str, frozenset[int]] | None = None,
    ) -> Binding:
        """Bind ``num`` (stated as ``q``) to a place of the cited ``indexes``: the first place of
        each ref that matches the whole quantity (computed places first). ``rows``: the table
        rows a claim names by a numbered label (``row_names``), per ref; a number binds only
        there in those refs."""
        search = _Search(num, q, rows)
        for cand in candidates(num, indexes, kinds, search.done):
            # Every candidate is kept: when none binds (no ref is done, so the search ran to
            # its end) they are what ``_why_not`` grades.
            search.found.append(cand)
            self._try(search, cand)
        if search.matches:
            return Binding(search.matches)
        if not search.found:
            return Binding([])
        return self._unbound(search)

    def _try(self, search: _Search, cand: Candidate) -> None:
        """Bind the number to this candidate's place when the whole quantity matches it."""
        idx, item, basis, unit_ok = cand
        rid = idx.ref.id
        num, q, rows = search.num, search.q, search.rows
        if rid in search.done or not unit_ok:
            return
        if rows and rid in rows and not in_named_row(idx, item[5], rows[rid]):
            return
        # A number written without a sign binds a negative value only when the claim's words
        # say it is negative (asked only when such a value is found).
        if not num.signed and item[0] < 0 and not q.negative_ok(num):
            return
        at = self.at(idx, item)
        if at is not None and not _unit_and_period_agree(q, item, at):
            return
        if not self.metric_ok(idx, at, q):
            return
        positive = not num.signed and item[0] > 0
        if positive and at is not None and self._direction_refuses(search, idx, item, at):
            return
        if at is not None and not at.computed:
            search.uncomputed.append((idx, item, basis))
            return
        search.done.add(rid)
        search.matches.append(Match(rid, f"{where_text(item[4])} ({basis})", idx.secondary))

    def _direction_refuses(self, search: _Search, idx: RefIndex, item: Item, at: _At) -> bool:
        """The direction rule: "fell 5%" is not backed by a change of +5 (a rise), nor by a
        sentence's "rose 5%"; the place is read first, the claim's words only at a change place
        or a sentence that states a direction. The first refusal is kept for the verdict."""
        change = at.change
        if change is None:
            change = self._read_change(idx, item, at)
        if not change:
            return False
        num, q = search.num, search.q
        says = RISE if at.directions is None else at.directions.get(str(item[4][-1]), 0)
        if (says == RISE and q.states_fall(num)) or (says == FALL and q.states_rise(num)):
            if search.refused is None:
                search.refused = (idx, item, says, at.directions is not None)
            return True
        return False

    def _unbound(self, search: _Search) -> Binding:
        """Why no candidate bound: a value not computed, a reversed direction, a value outside
        the rows the claim names, else the closest candidate's fault (``_why_not``)."""
        if search.uncomputed:
            idx, item, _ = search.uncomputed[0]
            return Binding(
                [],
                "value_not_computed",
                f"{_shown(item)} is {_label(idx, item)} in {idx.ref.id}, a value the code wrote "
                "itself or computed without reading a dataset: compute it from the data, or "
                "cite a dataset-backed ref that holds it",
            )
        if search.refused is not None:
            return _reversed(*search.refused)
        found, rows = search.found, search.rows
        if rows:
            named = [c for c in found if c[0].ref.id not in rows
                     or in_named_row(c[0], c[1][5], rows[c[0].ref.id])]  # fmt: skip
            if not named:
                idx, item = found[0][0], found[0][1]
                return Binding(
                    [],
                    "value_of_other_quantity",
                    f"{_shown(item)} is {_label(idx, item)} ({idx.ref.id}), not a value of the "
                    "row the claim names by its label",
                )
            found = named
        return self._why_not(found, search.num, search.q)

    def _read_change(self, idx: RefIndex, item: Item, at: _At) -> bool:
        """Is the place of ``item`` a change place (``_At.change``, read once per place)? A
        cost or tax row (``CHANGE_IF_UNSIGNED_ROW``) is one only when it shows no negative value."""
        kind = NOT_CHANGE
        key = item[5]
        if key == VALUE_PLACE:
            where = item[4]
            if type(where) is tuple:
                kind = _value_change(str(where[1]), self.vocab.key)
        elif key >= 0:  # ``RefIndex.place_of``, inline
            place = idx.places[key // PLACE_COLS]
            row = place.core
            col = key % PLACE_COLS
            if col == NO_COL and not row and not place.hint:  # a sentence (``index._index_text``)
                directions = _sentence_directions(place.context)
                if directions:
                    at.directions = directions
                change = at.change = bool(directions)
                return change
            kind = _change_place(row, idx.columns[col].core if col != NO_COL else "")
        if kind == CHANGE_IF_UNSIGNED_ROW:
            # A table row with no negative value; a named value's convention is unknown.
            kind = NOT_CHANGE
            if key >= 0:
                this_row = key // PLACE_COLS
                kind = CHANGE
                for it in idx.items:
                    if it[0] < 0 and it[5] // PLACE_COLS == this_row:
                        kind = NOT_CHANGE
                        break
        change = at.change = kind == CHANGE
        return change

    def _why_not(self, found: list[Candidate], num: Num, q: Quantity) -> Binding:
        """The code and detail of the candidate closest to the claim's quantity."""
        graded: list[Graded] = []
        for idx, item, basis, unit_ok in found:
            if not num.signed and item[0] < 0 and unit_ok and not q.negative_ok(num):
                at = self.at(idx, item)
                if at is None or (
                    unit_agrees(q.kind, item, at.hint)
                    and (not (q.periods and at.periods) or _period_in(q.periods, at.periods))
                    and self.metric_ok(idx, at, q)
                ):
                    return Binding(
                        [],
                        "value_of_other_sign",
                        f"{_shown(item)} is {_label(idx, item)} ({idx.ref.id}), a negative "
                        "value; the claim states it without a sign or a word that makes it "
                        "negative: write -5 or (5), or say so (a loss of 5, fell 5%)",
                    )
            at = self.at(idx, item)
            period_ok = True
            if at is not None:
                if not unit_agrees(q.kind, item, at.hint):
                    unit_ok = False
                period_ok = not (q.periods and at.periods) or _period_in(q.periods, at.periods)
            metric = self.metric_ok(idx, at, q)
            graded.append((idx, item, basis, unit_ok, metric, period_ok))
        code, g = _closest(graded)
        return Binding([], code, f"{_shown(g[1])} is {_label(g[0], g[1])} ({g[0].ref.id})")


def _reversed(idx: RefIndex, item: Item, says: int, sentence: bool) -> Binding:
    """The direction rule's verdict: the place states the other direction than the claim."""
    where = f"{_shown(item)} is {_label(idx, item)} ({idx.ref.id})"
    if says == FALL:
        detail = (
            f"{where}, a fall; the claim states it as a rise (rose, higher): state the direction "
            "the text gives (fell 5%), or cite the place that holds the rise"
        )
    else:
        detail = (
            f"{where}, {'a rise' if sentence else 'a change that is a rise'}; the claim states "
            "it as a fall (fell, lower): state the direction the change has (rose 5%), or cite "
            "the place that holds the fall"
        )
    return Binding([], "value_of_other_sign", detail)


@lru_cache(maxsize=1 << 10)
def _sentence_directions(sentence: str) -> dict[str, int]:
    """``quantity.sentence_directions``, once per sentence (shared by the refs that quote it)."""
    return sentence_directions(sentence)


@lru_cache(maxsize=1 << 12)
def _change_place(row: str, column: str) -> int:
    """``quantity.change_place`` of a table cell, once per labelling."""
    return change_place(row, column)


@lru_cache(maxsize=1 << 12)
def _value_change(name: str, vocab: VocabularyKey) -> int:
    """``quantity.change_place`` of a named value (its name and the vocabulary's description)."""
    return change_place(name, _descriptions(vocab).get(name.lower(), ""), named=True)


@lru_cache(maxsize=8)
def _descriptions(vocab: VocabularyKey) -> dict[str, str]:
    return dict(vocab)


def _place_key(item: Item) -> object:
    """What tells an item's place apart: its packed key, or a value's name."""
    key = item[5]
    if key == VALUE_PLACE:
        where = item[4]
        return where[1] if type(where) is tuple else where
    return key


def _hint(row: Place, col: Place | None) -> str:
    """The unit kind a place's labels state (a percent column wins over its row's default)."""
    if col is not None and col.hint == "percent":
        return "percent"
    if row.hint == TABLE_ROW:
        return table_row_hint(row.core, row.context + " " + (col.context if col else ""))
    return row.hint


def _period_in(periods: tuple[tuple[str, ...], ...], own: frozenset[str]) -> bool:
    """Is one of the claim's periods (each as the date keys that state it) the place's own?"""
    for keys in periods:
        for k in keys:
            if k not in own:
                break
        else:
            return True
    return False


def _closest(graded: list[Graded]) -> tuple[str, Graded]:
    """The code of the candidate closest to the claim's quantity, and that candidate."""
    for g in graded:
        if g[3] and g[4]:
            return "value_of_other_period", g
    for g in graded:
        if g[3]:
            return "value_of_other_quantity", g
    return "unit_kind_mismatch", graded[0]


def _shown(item: Item) -> str:
    """A value as its place shows it ("5,000", "9.6")."""
    v = item[0]
    return f"{int(v):,}" if v.is_integer() and abs(v) < 1e15 else f"{v:,}"


def _label(idx: RefIndex, item: Item) -> str:
    at = idx.place_of(item)
    if at is None:
        return where_text(item[4])
    row, col = at
    parts = [row.label[:120] if row.label else where_text(item[4])]
    if col is not None and col.label:
        parts.append(col.label)
    return ", ".join(parts)

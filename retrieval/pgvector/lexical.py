"""Unfiltered BM25 over the postings table, by max-score pruning: the exact top ``n``.

A query term adds at most ``idf * qtf`` to a chunk's score (the Lucene tf part,
``tf / (tf + k1 (1 - b + b dl / avgdl))``, is below 1). Rarest terms first, the first ``e``
terms are *essential*: the chunks holding one of them are the candidates, ranked by their
partial score (those terms only), read from the narrow postings; the best ``fetch`` are scored
in full (``complete``: every term, superseded sections left out). A chunk not scored in full
scores below its partial bound plus the most the other terms can add (``tail``), so when the
``n``-th full score reaches that bound the list is the exact top ``n``, ties in the same order
(score, then chunk id; ``proved``). Otherwise more terms become essential, the fewest whose ``tail`` is
below the ``n``-th score found so far (max-score's partition), and the search runs again; when
every term is essential and it still cannot prove the list, it says so (None) and the caller
scores every chunk holding a term.

The common terms, whose postings are the long ones, are then read only for the candidates, by
their primary key: the work follows the rarer terms' postings, not the index's size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from psycopg import sql

if TYPE_CHECKING:
    import psycopg

#: bm25s's defaults (method "lucene").
BM25_K1 = 1.5
BM25_B = 0.75

#: A query's terms held by the index: the terms, their counts in the query, their idf.
QueryTerms = tuple[list[str], list[int], list[float]]
#: Scores of chunks, best first: ``(chunk id, score)``.
Scored = list[tuple[int, float]]


class MaxScore:
    """One query's terms, rarest first, with the most each suffix of them can add."""

    def __init__(self, terms: QueryTerms) -> None:
        names, qtf, idf = terms
        order = sorted(range(len(names)), key=lambda i: (-idf[i], names[i]))
        self.terms: QueryTerms = (
            [names[i] for i in order],
            [qtf[i] for i in order],
            [idf[i] for i in order],
        )
        bounds = [idf[i] * qtf[i] for i in order]
        #: ``tail[e]``: the most the terms after the first ``e`` add to any score.
        self.tail = [math.fsum(bounds[e:]) for e in range(len(bounds) + 1)]

    def __len__(self) -> int:
        return len(self.terms[0])

    def essential(self, e: int) -> QueryTerms:
        names, qtf, idf = self.terms
        return names[:e], qtf[:e], idf[:e]

    def next_split(self, e: int, nth: float | None) -> int:
        """How many terms to make essential after ``e`` failed: the fewest whose ``tail`` is
        below the ``n``-th score found (``nth``); without one, twice as many."""
        if nth is None:
            return min(len(self), 2 * e)
        return next((f for f in range(e + 1, len(self)) if self.tail[f] < nth), len(self))


def maxscore_top(
    conn: psycopg.Connection,
    postings: sql.Identifier,
    terms: QueryTerms,
    avgdl: float,
    n: int,
    complete: Callable[[list[int]], Scored],
) -> Scored | None:
    """The ``n`` best BM25 scores over every chunk, exactly, or None when max-score pruning
    cannot prove them; ``complete(ids)`` gives those chunks' full scores, best first."""
    ms = MaxScore(terms)
    fetch = 2 * n
    e = 1
    nth: float | None = None
    while True:
        partial = partial_top(conn, postings, ms.essential(e), avgdl, fetch + 1)
        head = dict(partial[:fetch])
        beyond = partial[fetch][1] if len(partial) > fetch else None
        full = complete(list(head))
        if len(full) >= n:
            nth = full[n - 1][1] if nth is None else max(nth, full[n - 1][1])
        if proved(full, head, beyond, ms.tail[e], n):
            return full[:n]
        if e == len(ms):
            return None
        e = ms.next_split(e, nth)


def proved(full: Scored, head: dict[int, float], beyond: float | None, tail: float, n: int) -> bool:
    """Whether no chunk outside ``head`` (the candidates scored in full, with their partial
    scores; ``beyond``: the best partial score left out, None if none was) can enter the first
    ``n`` of ``full``. With terms left out (``tail`` > 0) such a chunk scores below ``beyond +
    tail``; with every term essential its partial score is its score, and one equal to the
    ``n``-th has a larger chunk id (``partial_top`` breaks ties by id), so it ranks after."""
    if beyond is None and tail == 0:  # every chunk holding a term was scored in full
        return True
    if len(full) < n:
        return False
    bound = (beyond or 0.0) + tail
    if tail > 0:
        return full[n - 1][1] >= bound
    return head[full[n - 1][0]] >= bound


def partial_top(
    conn: psycopg.Connection, postings: sql.Identifier, terms: QueryTerms, avgdl: float, top: int
) -> Scored:
    """The ``top`` best scores from ``terms`` alone over their postings (chunk id breaking
    ties), superseded sections included."""
    names, qtf, idf = terms
    rows = conn.execute(
        sql.SQL(
            "WITH q(term, qtf, idf) AS (SELECT * FROM unnest(%s::text[], %s::int[],"
            " %s::float8[]))"
            " SELECT p.chunk, sum(q.qtf * q.idf * p.tf"
            " / (p.tf + %s * ((1 - %s) + %s * p.dl / %s))) AS s"
            " FROM q JOIN {} p ON p.term = q.term"
            " GROUP BY p.chunk ORDER BY s DESC, p.chunk LIMIT %s"
        ).format(postings),
        [names, qtf, idf, BM25_K1, BM25_B, BM25_B, max(avgdl, 1e-9), top],
    ).fetchall()
    return [(int(c), float(s)) for c, s in rows]

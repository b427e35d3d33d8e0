"""Unfiltered BM25 over the postings table, by max-score pruning: the exact top ``n``.

A query term adds less than ``idf * qtf`` to a chunk's score (the Lucene tf part,
``tf / (tf + k1 (1 - b + b dl / avgdl))``, is below 1). With the terms rarest first:

1. a lower bound ``nth`` of the ``n``-th best score: the ``n`` chunks best on the rarest terms
   (as few of them as give ``n`` chunks), read from the narrow postings, scored in full
   (``complete``: every term, superseded sections left out); their ``n``-th score;
2. max-score's split: the fewest rarest terms (*essential*) such that the others together
   (``tail``) add less than ``nth``. A chunk holding no essential term scores below ``tail``,
   so it cannot reach the top ``n``; nor can one whose partial score (essential terms only)
   plus ``tail`` stays below ``nth``. The others (the candidates: the essential terms'
   postings read whole) are scored in full in SQL, the other terms' postings looked up by
   primary key for them only; their best ``2 n`` are scored again by ``complete`` (superseded
   sections left out), and the first ``n`` are the exact top ``n``, ties in the same order
   (score, then chunk id).

The common terms, whose postings are the long ones, are read only for the candidates. When the
superseded sections among the best candidates leave fewer than ``n`` it says so (None) and the
caller scores every chunk holding a term.
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

#: Relative slack on the candidates' cut: partial and full sums add in different orders.
SLACK = 1e-9

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

    def split(self, nth: float) -> int:
        """The fewest essential terms: those after them add less than ``nth``."""
        return next((e for e in range(1, len(self)) if self.tail[e] < nth), len(self))


def maxscore_top(
    conn: psycopg.Connection,
    postings: sql.Identifier,
    terms: QueryTerms,
    avgdl: float,
    n: int,
    complete: Callable[[list[int]], Scored],
) -> Scored | None:
    """The ``n`` best BM25 scores over every chunk, exactly, or None when the candidates'
    best hold too many superseded sections to prove them; ``complete(ids)`` gives those
    chunks' full scores (superseded sections left out), best first."""
    ms = MaxScore(terms)
    found = lower_bound(conn, postings, ms, avgdl, n, complete)
    if not isinstance(found, float):
        return found
    e = ms.split(found)
    # ``SLACK``: a partial score summed in another order than the full one
    cut = found - ms.tail[e] - SLACK * max(1.0, found)
    fetch = 2 * n
    best = scored_candidates(conn, postings, ms, e, avgdl, cut, fetch + 1)
    full = complete([c for c, _ in best[:fetch]])
    if len(best) <= fetch:
        return full[:n]
    # a candidate left out scores at most the first one left out, and on a tie has the larger
    # chunk id (the candidates' order), so it ranks after the n-th
    if len(full) >= n and dict(best)[full[n - 1][0]] >= best[fetch][1]:
        return full[:n]
    return None


def lower_bound(
    conn: psycopg.Connection,
    postings: sql.Identifier,
    ms: MaxScore,
    avgdl: float,
    n: int,
    complete: Callable[[list[int]], Scored],
) -> float | Scored:
    """The ``n``-th best full score of the ``n`` chunks best on the rarest terms (as few as
    give ``n`` chunks), a lower bound of the true ``n``-th; or, when fewer than ``n`` chunks
    hold any term, their exact list."""
    e = 1
    while True:
        partial = partial_top(conn, postings, ms.essential(e), avgdl, n)
        full = complete([c for c, _ in partial])
        if len(full) >= n:
            return full[n - 1][1]
        if e == len(ms):
            # every chunk holding a term scored, or superseded ones dropped: no bound but 0
            return full if len(partial) < n else 0.0
        e = min(len(ms), 2 * e)


#: A posting's BM25 weight (bm25s's Lucene variant), over ``q`` (the query's terms) joined to
#: ``p`` (the postings).
WEIGHT = "q.qtf * q.idf * p.tf / (p.tf + %(k1)s * ((1 - %(b)s) + %(b)s * p.dl / %(avgdl)s))"


def scored_candidates(
    conn: psycopg.Connection,
    postings: sql.Identifier,
    ms: MaxScore,
    e: int,
    avgdl: float,
    cut: float,
    top: int,
) -> Scored:
    """The ``top`` best full scores (superseded sections included) of the chunks whose score
    from the first ``e`` terms reaches ``cut``: the essential terms' postings read whole, the
    others' looked up by primary key for those chunks only."""
    names, qtf, idf = ms.terms
    rows = conn.execute(
        sql.SQL(
            "WITH q(term, qtf, idf, essential) AS (SELECT * FROM unnest(%(names)s::text[],"
            " %(qtf)s::int[], %(idf)s::float8[], %(essential)s::boolean[])),"
            " part AS (SELECT p.chunk, sum({w}) AS s FROM q JOIN {p} p ON p.term = q.term"
            " WHERE q.essential GROUP BY p.chunk HAVING sum({w}) >= %(cut)s)"
            " SELECT part.chunk, part.s + coalesce((SELECT sum({w}) FROM q JOIN {p} p"
            " ON p.term = q.term WHERE NOT q.essential AND p.chunk = part.chunk), 0) AS s"
            " FROM part ORDER BY s DESC, part.chunk LIMIT %(top)s"
        ).format(p=postings, w=sql.SQL(WEIGHT)),
        {
            "names": names,
            "qtf": qtf,
            "idf": idf,
            "essential": [i < e for i in range(len(names))],
            "k1": BM25_K1,
            "b": BM25_B,
            "avgdl": max(avgdl, 1e-9),
            "cut": cut,
            "top": top,
        },  # fmt: skip
    ).fetchall()
    return [(int(c), float(v)) for c, v in rows]


def partial_top(
    conn: psycopg.Connection, postings: sql.Identifier, terms: QueryTerms, avgdl: float, top: int
) -> Scored:
    """The ``top`` best scores from ``terms`` alone over their postings (chunk id breaking
    ties), superseded sections included."""
    names, qtf, idf = terms
    rows = conn.execute(
        sql.SQL(
            "WITH q(term, qtf, idf) AS (SELECT * FROM unnest(%(names)s::text[],"
            " %(qtf)s::int[], %(idf)s::float8[]))"
            " SELECT p.chunk, sum({w}) AS s FROM q JOIN {p} p ON p.term = q.term"
            " GROUP BY p.chunk ORDER BY s DESC, p.chunk LIMIT %(top)s"
        ).format(p=postings, w=sql.SQL(WEIGHT)),
        {
            "names": names,
            "qtf": qtf,
            "idf": idf,
            "k1": BM25_K1,
            "b": BM25_B,
            "avgdl": max(avgdl, 1e-9),
            "top": top,
        },  # fmt: skip
    ).fetchall()
    return [(int(c), float(v)) for c, v in rows]

"""Generated warehouse queries whose true table references are known by construction.

``queries(depth)`` draws a query with CTEs shadowing table names at every depth (in the WITH of
the root, of derived tables, of WHERE subqueries, of UNION branches, of LATERAL subqueries),
VALUES lists, quoted and case-changed identifiers, comments holding table names, and aliases
that reuse table names. Each reference is resolved the way PostgreSQL does it (identifier
folding; a CTE is visible in its own query and in later siblings' bodies, itself only when
RECURSIVE; never in an enclosing, sibling or LATERAL scope; a qualified name is never a CTE),
so a drawn ``Generated`` carries the set of real tables the query reads. Used by
tests/tools/sandbox/test_warehouse_scope.py (small) and benchmarks/sql_allowlist_fuzz.py (large).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

#: The one declared dataset the generated queries may read.
DECLARED = "macro"
#: Names a reference or a CTE may use: the declared one, undeclared tables, catalogs.
TABLE_NAMES = ["macro", "wh_secret", "pg_user", "pg_tables", "pg_authid", "tables", "t1"]
QUALIFIED = [
    "pg_catalog.pg_authid",
    "information_schema.tables",
    "public.wh_secret",
    "public.macro",
]
CTE_NAMES = ["macro", "wh_secret", "pg_user", "t1", "t2", "Wh_Secret"]


@dataclass(frozen=True)
class Generated:
    sql: str
    #: Real relations read (folded names: ``"MACRO"`` is not ``macro``; qualified ones as
    #: written, lower-cased).
    reads: frozenset[str]

    @property
    def undeclared(self) -> frozenset[str]:
        return frozenset(r for r in self.reads if r != DECLARED)


def _ident(draw, name: str, exact: bool = False) -> tuple[str, str]:
    """(SQL spelling, folded name) of ``name``: unquoted in some case, or quoted."""
    styles = (
        ["plain"] * 3 + ["upper", "mixed", "quoted", "quoted"] + ([] if exact else ["quoted_upper"])
    )
    style = draw(st.sampled_from(styles))
    if style == "plain":
        return name, name.lower()
    if style == "upper":
        return name.upper(), name.lower()
    if style == "mixed":
        return "".join(c.upper() if i % 2 else c for i, c in enumerate(name)), name.lower()
    if style == "quoted":
        return f'"{name}"', name
    return f'"{name.upper()}"', name.upper()


def _kw(draw, word: str) -> str:
    return draw(st.sampled_from([word, word.lower(), word.title()]))


def _gap(draw) -> str:
    """Whitespace, or a comment that names a table (not a reference)."""
    return draw(
        st.sampled_from([" ", "  ", "\n", " /* wh_secret */ ", " -- pg_user\n", " /* macro */ "])
    )


@st.composite
def _table_ref(draw, env: frozenset[str], leak: bool) -> tuple[str, set[str]]:
    """A table reference: mostly the declared table or a visible CTE, sometimes a name that is
    a CTE elsewhere in the query (a shadowing candidate), an undeclared table or a catalog."""
    roll = draw(st.integers(0, 39)) if leak else 39
    if roll == 0:
        name = draw(st.sampled_from(QUALIFIED))
        return name, {name.lower()}
    if roll < 4:
        name = draw(st.sampled_from(TABLE_NAMES))
    elif env and draw(st.booleans()):
        name = draw(st.sampled_from(sorted(env)))
    else:
        name = DECLARED
    spelled, folded = _ident(draw, name, exact=name == DECLARED and not leak)
    if name in env and not leak:
        spelled, folded = f'"{name}"', name
    alias = ""
    if draw(st.booleans()):
        alias_name, _ = _ident(draw, draw(st.sampled_from([*TABLE_NAMES, "a", "b"])))
        alias = f" {_kw(draw, 'AS')} {alias_name}"
    return spelled + alias, set() if folded in env else {folded}


@st.composite
def _from_item(draw, env: frozenset[str], depth: int, leak: bool) -> tuple[str, set[str]]:
    kinds = ["table", "values"] + (["derived", "lateral"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "table":
        return draw(_table_ref(env, leak))
    if kind == "values":
        return "(VALUES (1), (2)) AS v(c)", set()
    sub = draw(queries(depth - 1, env, leak))
    alias = draw(st.sampled_from(["s", "wh_secret", "macro", "q"]))
    lateral = f"{_kw(draw, 'LATERAL')} " if kind == "lateral" else ""
    return f"{lateral}({sub.sql}) AS {alias}", set(sub.reads)


@st.composite
def _select(draw, env: frozenset[str], depth: int, leak: bool) -> tuple[str, set[str]]:
    reads: set[str] = set()
    items = []
    for _ in range(draw(st.integers(1, 3))):
        text, r = draw(_from_item(env, depth, leak))
        items.append(text)
        reads |= r
    sql = f"{_kw(draw, 'SELECT')} *{_gap(draw)}{_kw(draw, 'FROM')} " + ", ".join(items)
    if depth > 0 and draw(st.booleans()):
        sub = draw(queries(depth - 1, env, leak))
        reads |= sub.reads
        test = draw(st.sampled_from(["EXISTS ({})", "1 IN ({})", "(SELECT 1 FROM ({}) AS x) = 1"]))
        sql += f"{_gap(draw)}{_kw(draw, 'WHERE')} " + test.format(sub.sql)
    return sql, reads


@st.composite
def queries(
    draw, depth: int = 3, env: frozenset[str] = frozenset(), leak: bool = True
) -> Generated:
    """A query over generated FROM items, with its own WITH clause and UNION branches. With
    ``leak=False`` every reference is the declared table or a CTE visible where it stands."""
    reads: set[str] = set()
    with_sql = ""
    inner_env = env
    if draw(st.booleans()):
        recursive = draw(st.integers(0, 3)) == 0
        names = {}
        for _ in range(draw(st.integers(1, 2))):
            pool = CTE_NAMES if leak else [n for n in CTE_NAMES if not n.startswith("pg_")]
            spelled, folded = _ident(draw, draw(st.sampled_from(pool)))
            names.setdefault(folded, spelled)
        parts = []
        defined: list[str] = []
        for folded, spelled in names.items():
            # a body sees earlier siblings; with RECURSIVE every sibling and itself (the checker
            # refuses a forward reference, a refusal on the safe side: leak=False draws none)
            seen = (set(names) if leak else {*defined, folded}) if recursive else set(defined)
            body_env = env | seen
            body = draw(queries(max(depth - 1, 0), frozenset(body_env), leak))
            reads |= body.reads
            text = body.sql + (f" UNION ALL SELECT * FROM {spelled}" if recursive else "")
            parts.append(f"{spelled} AS ({text})")
            defined.append(folded)
        inner_env = env | set(names)
        keyword = _kw(draw, "WITH") + (f" {_kw(draw, 'RECURSIVE')}" if recursive else "")
        with_sql = f"{keyword} " + ", ".join(parts) + _gap(draw)
    body, r = draw(_select(frozenset(inner_env), depth, leak))
    reads |= r
    if depth > 0 and draw(st.integers(0, 3)) == 0:
        # a parenthesised branch with its own WITH: its CTEs do not reach the other branch
        other = draw(queries(depth - 1, frozenset(inner_env), leak))
        reads |= other.reads
        body = f"{body}{_gap(draw)}{_kw(draw, 'UNION')} ({other.sql})"
    return Generated(with_sql + body, frozenset(reads))


#: Escapes tried by hand: each reads a table or catalog that is not declared.
KNOWN_ESCAPES = [
    # the bypass: a CTE in a derived table hides the outer reference
    "SELECT s.who, s.salary FROM macro m, wh_secret s, "
    "(WITH wh_secret AS (SELECT 1 AS z) SELECT z FROM wh_secret) t",
    "SELECT * FROM macro m, pg_authid s, (WITH pg_authid AS (SELECT 1 AS z) SELECT z FROM pg_authid) t",
    "SELECT * FROM macro, (WITH pg_user AS (SELECT 1) SELECT * FROM pg_user) t, pg_user",
    "SELECT * FROM macro WHERE EXISTS (WITH wh_secret AS (SELECT 1) SELECT 1 FROM wh_secret) "
    "UNION SELECT * FROM wh_secret",
    "(WITH wh_secret AS (SELECT 1) SELECT * FROM wh_secret) UNION SELECT * FROM wh_secret",
    "SELECT * FROM macro AS wh_secret, LATERAL (SELECT * FROM wh_secret) s",
    "WITH macro AS (SELECT * FROM wh_secret) SELECT * FROM macro",
    "WITH a AS (SELECT * FROM wh_secret), wh_secret AS (SELECT 1) SELECT * FROM a",
    'WITH "WH_SECRET" AS (SELECT 1) SELECT * FROM macro, wh_secret',
    'WITH wh_secret AS (SELECT 1) SELECT * FROM macro, "WH_SECRET"',
    "SELECT * FROM macro, (SELECT * FROM (WITH t AS (SELECT 1) SELECT * FROM t) x, wh_secret) y",
    "SELECT (SELECT who FROM wh_secret LIMIT 1) FROM macro",
    "SELECT * FROM macro WHERE year IN (SELECT salary FROM wh_secret)",
    "SELECT * FROM (macro CROSS JOIN wh_secret)",
    "SELECT * FROM (macro AS m CROSS JOIN wh_secret) AS j",
    "SELECT * FROM macro JOIN wh_secret ON true",
    "SELECT * FROM macro, ONLY wh_secret",
    "SELECT * FROM macro, wh_secret*",
    "SELECT * FROM macro, pg_user",
    "SELECT * FROM macro, PG_USER",
    'SELECT * FROM macro, "pg_user"',
    "SELECT * FROM macro, pg_catalog.pg_user",
    'SELECT * FROM macro, "pg_catalog"."pg_authid"',
    "SELECT * FROM macro, Pg_Catalog.Pg_Settings",
    "SELECT * FROM macro, pg_tables",
    "SELECT * FROM macro, pg_hba_file_rules",
    "SELECT * FROM macro, information_schema.tables",
    'SELECT * FROM macro, "information_schema"."columns"',
    "SELECT * FROM macro, public.wh_secret",
    "SELECT * FROM macro, refgate.public.wh_secret",
    "SELECT * FROM macro /* , */, wh_secret",
    "SELECT * FROM macro -- x\n, wh_secret",
    "SELECT * FROM macro UNION ALL SELECT * FROM wh_secret",
    "SELECT * FROM macro INTERSECT SELECT * FROM wh_secret",
    "SELECT * FROM macro EXCEPT SELECT * FROM wh_secret",
    "SELECT * FROM macro, LATERAL (SELECT * FROM wh_secret) s",
    "SELECT * FROM macro, LATERAL (WITH macro AS (SELECT 1) SELECT * FROM macro, wh_secret) s",
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT * FROM r, wh_secret",
    "SELECT * FROM macro, (VALUES (1)) AS wh_secret(x), wh_secret",
    "SELECT 'wh_secret'::regclass FROM macro",
    "SELECT CAST('pg_authid' AS regclass) FROM macro",
    "SELECT pg_read_file('/etc/passwd') FROM macro",
    "SELECT pg_catalog.pg_read_file('/etc/passwd') FROM macro",
    "SELECT pg_catalog.upper('x') FROM macro",
    "SELECT current_setting('data_directory') FROM macro",
    "SELECT query_to_xml('select * from wh_secret', true, true, '') FROM macro",
    "SELECT * FROM macro, pg_ls_dir('.') AS f",
    "SELECT * FROM macro, dblink('host=x', 'select 1') AS t(a int)",
    "SELECT * FROM macro, ROWS FROM (pg_ls_dir('.')) AS f",
    "SELECT * FROM macro; SELECT * FROM wh_secret",
    "TABLE wh_secret",
    "WITH d AS (DELETE FROM macro RETURNING *) SELECT * FROM d",
    "SELECT * INTO copy_of FROM macro",
    "SELECT * FROM macro FOR UPDATE",
    "COPY (SELECT * FROM wh_secret) TO STDOUT",
]

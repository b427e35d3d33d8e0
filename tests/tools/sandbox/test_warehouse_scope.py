"""The warehouse allowlist resolves tables by scope: a CTE hides a table only inside the scope
that defines it, system catalogs are refused by any name (issue 31, item 1). No database needed:
the session layer's tests, on the real PostgreSQL, are in test_warehouse.py."""

from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from shared.sql_fuzz import KNOWN_ESCAPES, queries

from refgate.tools.warehouse_check import QueryRefused, check_query

DECLARED = {"macro": SimpleNamespace(name="macro", url="postgresql://db/x", password_env=None)}
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("query", KNOWN_ESCAPES)
def test_every_known_escape_is_refused_by_the_checker(query):
    with pytest.raises(QueryRefused):
        check_query(query, DECLARED)


@FUZZ
@given(queries(2, leak=True))
def test_generated_queries_reading_anything_undeclared_are_refused(generated):
    if not generated.undeclared:
        return
    with pytest.raises(QueryRefused):
        check_query(generated.sql, DECLARED)


@FUZZ
@given(queries(2, leak=False))
def test_generated_queries_over_the_declared_table_and_visible_ctes_pass(generated):
    if not generated.reads:
        return  # CTEs and VALUES only: "names no warehouse dataset"
    checked = check_query(generated.sql, DECLARED)
    assert set(checked.tables) == {"macro"}


@pytest.mark.parametrize(
    "query",
    [
        "WITH macro AS (SELECT * FROM macro WHERE year = 2009) SELECT COUNT(*) FROM macro",
        "SELECT COUNT(*) FROM macro, (WITH macro AS (SELECT 1 AS z) SELECT z FROM macro) t",
        'SELECT COUNT(*) FROM "macro" WHERE year IN (WITH w AS (SELECT 2009) SELECT * FROM w)',
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT COUNT(*) FROM macro, r",
    ],
)
def test_ctes_shadow_only_where_they_are_defined(query):
    assert set(check_query(query, DECLARED).tables) == {"macro"}

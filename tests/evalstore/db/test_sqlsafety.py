"""The second layer of read-only SQL (evalstore/db/sqlsafety.py): statements read as DuckDB's
parser reads them, never by a regular expression."""

from __future__ import annotations

import duckdb
import pytest

from evalstore.db import sqlsafety
from evalstore.db.sqlsafety import NotReadOnly, check_read_only, statement_kind
from evalstore.errors import StoreError


@pytest.mark.parametrize(
    "query",
    [
        # issue 39: a ')' inside a string literal ended the EXPLAIN "options" for the old regex
        "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM enable_logging(storage := 'file', storage_path := 'l'))",
        "EXPLAIN ANALYZE (SELECT ')' AS a, * FROM checkpoint())",
        "EXPLAIN (SELECT ') SELECT 1 --', nextval('s'))",
        "EXPLAIN ANALYZE (FORMAT json) SELECT * FROM enable_profiling()",
        "EXPLAIN ANALYZE COPY (SELECT 1) TO 'x.csv'",
        "EXPLAIN ANALYZE /* ) */ (SELECT * FROM force_checkpoint())",
        "UPDATE EXTENSIONS",
        "PRAGMA threads = 1",
        "PRAGMA table_info = 'x'",
        'PRAGMA "enable_profiling"',
    ],
)
def test_refused_whatever_the_text_hides(query):
    with pytest.raises(NotReadOnly):
        check_read_only(query)


@pytest.mark.parametrize(
    "query",
    [
        "EXPLAIN SELECT 1",
        "EXPLAIN ANALYZE SELECT ')' AS a",
        "EXPLAIN (FORMAT json) SELECT 1",
        "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a)",
        "PRAGMA table_info('runs')",
        "PRAGMA version",
        "SELECT 1 AS \"set\", 'insert' AS copy",
    ],
)
def test_allowed(query):
    check_read_only(query)


def test_a_kind_the_python_package_cannot_name_is_unknown_not_a_crash():
    (st,) = duckdb.extract_statements("UPDATE EXTENSIONS")
    assert statement_kind(st) == "UNKNOWN"
    with pytest.raises(NotReadOnly, match="cannot name"):
        check_read_only("UPDATE EXTENSIONS")


def test_a_cte_name_names_nothing_outside_its_query():
    # issue 39: the CTE's name made the file scan of the outer query look like a relation
    q = "SELECT * FROM (WITH \"spill/creds.csv\" AS (SELECT 1) SELECT 1) AS a, 'spill/creds.csv'"
    with pytest.raises(NotReadOnly, match="not a relation of the store"):
        check_read_only(q, sandbox=True, relations={"runs"})
    check_read_only('WITH "x.csv" AS (SELECT 1) SELECT * FROM "x.csv"', sandbox=True, relations={"runs"})
    check_read_only(
        "WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b, runs", sandbox=True, relations={"runs"}
    )


def test_the_sandbox_refuses_table_functions_that_ignore_an_interrupt():
    # test_all_types(use_large_bignum := true) ran 10 minutes through con.interrupt() (duckdb 2.0.1)
    with pytest.raises(NotReadOnly, match="not an allowed table function"):
        check_read_only("SELECT * FROM test_all_types(use_large_bignum := true)", sandbox=True)


def test_no_regular_expression_reads_a_statement():
    assert "import re" not in open(sqlsafety.__file__).read()


def test_an_empty_query_or_bad_syntax_is_a_store_error():
    for q in ("", "  ;  ", "SELEC 1"):
        with pytest.raises(StoreError):
            check_read_only(q)

"""Reading and checking a measure's definition: declarations, and what a definition may not do,
found on DuckDB's parse tree (never on the text)."""

from __future__ import annotations

import pytest

from evalstore.errors import MetricError
from evalstore.metrics.user import define
from evalstore.metrics.user.definition import referenced, sql_measure

P = (
    "SELECT qrels, run, topic, count(*) FILTER (WHERE grade >= 1 AND rank <= ${k}) / ${k} AS value "
    "FROM ranked GROUP BY ALL"
)
S = "SELECT qrels, run, topic, 1 AS value FROM "


def test_the_simplest_form_reads_ranked_and_takes_a_cutoff():
    m = define("p", sql="-- precision at k\n-- cutoff: required\n" + P)
    assert (m.reads, m.cutoff, m.aggregate, m.doc, m.keys) == (
        {"ranked"},
        "required",
        "mean",
        "precision at k",
        ("qrels", "run"),
    )
    assert define("p2", sql=P).cutoff == "optional"  # ${k} used: a cutoff may be given
    sql = "SELECT qrels AS qrels_id, run AS run_id, topic, count(*) AS value FROM ranked GROUP BY ALL"
    plain = define("n", sql="-- aggregate: sum\n" + sql)
    assert (plain.cutoff, plain.aggregate, plain.keys) == ("none", "sum", ("qrels_id", "run_id"))


def test_declarations_are_checked():
    with pytest.raises(MetricError, match="declares 'reads' twice"):
        define("x", sql="-- reads: ranked\n-- reads: ranked\n" + P)
    with pytest.raises(MetricError, match="cutoff is one of none, optional, required"):
        define("x", sql="-- cutoff: sometimes\n" + P)
    with pytest.raises(MetricError, match="uses \\$\\{k\\} but declares cutoff: none"):
        define("x", sql="-- cutoff: none\n" + P)
    with pytest.raises(MetricError, match="unknown placeholder \\$\\{n\\}"):
        define("x", sql="SELECT qrels, run, topic, ${n} AS value FROM ranked")
    with pytest.raises(MetricError, match="cannot read score_data"):
        define("x", sql="-- reads: score_data\nSELECT 1")
    with pytest.raises(MetricError, match="unknown needs cgg"):
        define("x", sql="-- reads: rl_judged\n-- needs: cgg\nSELECT qrels_id, run_id, topic, 1 AS value FROM rl_judged")
    with pytest.raises(MetricError, match="starts with a letter"):
        define("1st", sql=P)
    with pytest.raises(MetricError, match="give sql=TEXT or python=FUNCTION"):
        define("x")


REFUSED = {
    "a store table": (S + "ranked, score_data", "'score_data', which is not a"),
    "an undeclared relation": (S + "judgments", "reads judgments, which it does not declare"),
    "a file by name": (S + "ranked, 'secrets.csv'", "'secrets.csv', which is not"),
    "a file reader": (S + "ranked, read_csv('/etc/passwd')", "table function read_csv"),
    "query()": (S + "ranked, query('SELECT * FROM score_data')", "table function query"),
    "the catalogue": (S + "ranked, duckdb_tables()", "table function duckdb_tables"),
    "a qualified name": (S + "main.ranked", "'main.ranked', which is not"),
    "another database": (S + "store.main.ranked", "'store.main.ranked'"),
    "a sequence": ("SELECT qrels, run, topic, nextval('s') AS value FROM ranked", "calls nextval, which changes state"),
    "two statements": ("SELECT 1 FROM ranked; SELECT 2 FROM ranked", "and this is SELECT, SELECT"),
    "a write": ("CREATE TABLE stolen AS SELECT * FROM ranked", "one SELECT statement, and this is CREATE"),
    "COPY": ("COPY (SELECT * FROM ranked) TO 'out.csv'", "one SELECT statement, and this is COPY"),
    "ATTACH": ("ATTACH 'other.duckdb'", "one SELECT statement, and this is ATTACH"),
    "SET": ("SET enable_external_access = true", "one SELECT statement, and this is SET"),
    "a CTE out of its scope": (
        S + "(WITH score_data AS (SELECT 1) SELECT * FROM score_data) a, "
        "score_data, ranked",
        "'score_data', which is not",
    ),
    "nonsense": ("SELEC qrels FROM ranked", "DuckDB cannot parse it"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_a_definition_may_not_do_is_refused_with_a_message(case):
    sql, message = REFUSED[case]
    with pytest.raises(MetricError, match=message.replace("(", "\\(").replace(")", "\\)")):
        sql_measure("bad", sql)


def test_common_table_expressions_in_scope_are_the_definitions_own():
    sql = "WITH score_data AS (SELECT * FROM ranked) SELECT qrels, run, topic, 1 AS value FROM score_data"
    assert sql_measure("ok", sql).reads == {"ranked"}
    assert referenced(sql)[0] == {"ranked"}
    nested = "SELECT * FROM (WITH x AS (SELECT * FROM ranked) SELECT * FROM x) a, x"
    assert referenced(nested)[0] == {"ranked", "x"}  # the outer x is not the inner CTE


def test_a_declared_relation_must_be_read():
    with pytest.raises(MetricError, match="declares reads judgments but does not read it"):
        sql_measure("x", "-- reads: ranked, judgments\n" + P)


def test_binding_is_checked_before_any_evaluation():
    with pytest.raises(MetricError, match="DuckDB cannot run its SQL.*no_such_column"):
        define("x", sql="SELECT qrels, run, topic, no_such_column AS value FROM ranked")
    with pytest.raises(MetricError, match="returns the columns qrels, run, value; it returns qrels, run, topic, value"):
        define("x", sql="SELECT qrels, run, 1 AS value FROM ranked")
    with pytest.raises(MetricError, match="its value column is not a number"):
        define("x", sql="SELECT qrels, run, topic, doc AS value FROM ranked")


def test_the_definition_has_an_identity():
    a, b = define("a", sql=P), define("a", sql=P + " ")
    assert a.sha256 == define("a", sql=P).sha256 != b.sha256

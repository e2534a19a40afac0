"""Measures kept in a store: known to whoever opens it (another process too), listed, replaced with
their old scores dropped, and never reused across definitions; the command line's measure group."""

from __future__ import annotations

import subprocess
import sys

import pytest

import evalstore
from evalstore.errors import MetricError
from evalstore.metrics import registry

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}}
RUN = {"q1": {"d3": 3.0, "d1": 2.0, "d7": 1.0}, "q2": {"d5": 2.0, "d4": 1.0}}
HITS = "-- relevant documents retrieved\n-- aggregate: sum\n" + (
    "SELECT qrels, run, topic, count(*) FILTER (WHERE grade >= 1) AS value FROM ranked GROUP BY ALL"
)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(QRELS, name="q")
        s.ingest_run(RUN, name="r")
        yield s
    registry.unregister_user("hits")


def test_a_stored_measure_is_known_to_whoever_opens_the_store(store):
    assert store.add_measure("hits", HITS).status == "added"
    assert store.evaluate("q", None, ["hits"], progress=False).mean("r", "hits") == 3.0
    listed = store.list_measures().records()
    assert [(m["name"], m["aggregate"], m["reads"], m["description"]) for m in listed] == [
        ("hits", "sum", "ranked", "relevant documents retrieved")
    ]
    assert store.sql("SELECT name, language FROM measures").rows == [("hits", "sql")]
    store.close()
    code = (
        f"import evalstore; s = evalstore.open({store.location!r}, read_only=True); "
        "print(s.evaluate('q', None, ['hits', 'NumRelRet'], save=False, progress=False).table())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "{'r': {'hits': 3.0, 'NumRelRet': 3.0}}"


def test_another_definition_needs_replace_and_drops_the_old_scores(store):
    store.add_measure("hits", HITS)
    store.evaluate("q", None, ["hits"], progress=False)
    assert store.add_measure("hits", HITS).status == "unchanged"
    other = HITS.replace("grade >= 1", "grade >= 2")
    with pytest.raises(MetricError, match="another definition; replace it with --replace"):
        store.add_measure("hits", other)
    res = store.add_measure("hits", other, replace=True)
    assert (res.status, res.dropped_scores) == ("replaced", 1)
    assert store.sql("SELECT count(*) FROM scores").rows == [(0,)]
    assert store.evaluate("q", None, ["hits"], progress=False).mean("r", "hits") == 1.0
    params = store.sql("SELECT params->>'$.definition' FROM evaluations").rows[0][0]
    assert params == registry.get("hits").user.sha256  # type: ignore[union-attr]
    assert store.drop_measure("hits").dropped_scores == 1
    with pytest.raises(MetricError, match="unknown metric 'hits'"):
        registry.get("hits")


def test_a_refused_definition_stores_nothing(store):
    with pytest.raises(MetricError, match="which is not a relation a measure may read"):
        store.add_measure("leak", "SELECT qrels, run, topic, 1 AS value FROM ranked, score_data")
    assert store.sql("SELECT count(*) FROM measures").rows == [(0,)]


def test_the_command_line_keeps_lists_and_uses_measures(store, tmp_path, cli):
    db = store.location
    store.close()
    sql = tmp_path / "hits.sql"
    sql.write_text(HITS)
    code, out, err = cli("measure", "add", "hits", "--sql", sql, "--db", db)
    assert code == 0 and "measure 'hits' added" in out + err
    code, out, _ = cli("measure", "list", "--db", db, "-f", "csv")
    assert out.splitlines()[0] == "name,cutoff,aggregate,reads,description,source,sha256,added_at"
    assert out.splitlines()[1].startswith("hits,none,sum,ranked,relevant documents retrieved,hits.sql,")
    registry.unregister_user("hits")  # a new command knows it from the store
    code, out, err = cli("eval", "-q", "q", "-m", "hits", "--db", db, "-f", "csv")
    assert (code, out.splitlines()) == (0, ["run,qrels,n_topics,hits", "r,q,2,3"]), err
    both = tmp_path / "two.sql"
    both.write_text("-- @measure first\n" + HITS + "\n-- @measure second\n" + HITS.replace(">= 1", ">= 2"))
    code, out, err = cli("eval", "-q", "q", "-m", "first", "-m", "second", "--measures", both, "--db", db, "-f", "csv")
    assert (code, out.splitlines()[1]) == (0, "r,q,2,3,1"), err
    code, _, err = cli("measure", "add", "bad", "--sql", tmp_path / "missing.sql", "--db", db)
    assert code != 0 and "cannot read the measure's SQL" in err
    for name in ("first", "second"):
        registry.unregister_user(name)


def test_the_explorer_shows_a_stored_measure(store):
    pytest.importorskip("starlette")
    from webfixtures import client_of

    store.add_measure("hits", HITS)
    store.evaluate("q", None, ["hits", "AP"], progress=False)
    store.close()
    registry.unregister_user("hits")  # the server knows it from the store
    with client_of(store.location) as client:
        page = client.get("/?qrels=q&metric=hits")
        assert page.status_code == 200 and 'title="mean hits"' in page.text
        assert '<td class="num" data-v="3.0">3.0000</td>' in page.text  # the sum over the topics, as a sum measure
        assert client.get("/runs/r?qrels=q&metric=hits").status_code == 200


def test_compare_and_explain_read_a_stored_measure(store):
    store.add_measure("hits", HITS.replace("-- aggregate: sum\n", ""))  # compare takes arithmetic means
    store.ingest_run({"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d9": 1.0}}, name="other")
    cmp = store.compare("q", "r", ["other"], ["hits", "P@2"], save=False)
    assert (cmp.runs, cmp.means[:, 0].tolist()) == (["r", "other"], [1.5, 0.5])
    assert cmp.pairs[0]["metric"] == "hits"
    ex = store.explain("hits", "q", "r", "q1")
    assert (ex.value, ex.columns, [row[1] for row in ex.rows]) == (2.0, ["rank", "doc", "score", "grade"],
                                                                   ["d3", "d1", "d7"])  # fmt: skip
    assert [row[3] for row in ex.rows] == [1, 2, None]

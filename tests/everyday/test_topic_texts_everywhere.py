"""A store's topic texts in every output that names topics (issue 44.6): `list topics` / `list docs`,
a default topic-set name that says which collection a generic `topics.tsv` belongs to, and the
query beside each topic in `eval --per-topic`, `export leaderboard --per-topic`, `compare
--per-topic` and `explain` (the web pages showed it already)."""

from __future__ import annotations

import csv
import io
import json

import pytest

import evalstore

QUERIES = {f"S0{i}": f"query of S0{i}" for i in range(1, 9)}


@pytest.fixture
def with_topics(sample_db, tmp_path, cli):
    folder = tmp_path / "sample-collection"
    folder.mkdir()
    (folder / "topics.tsv").write_text("".join(f"{t}\t{q}\n" for t, q in QUERIES.items()))
    code, _, err = cli("ingest", "topics", folder / "topics.tsv", "--db", sample_db)
    assert code == 0, err
    assert "topic set 'sample-collection-topics' added: 8 topics" in err  # not 'topics'
    return sample_db


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_list_topics_and_docs(with_topics, cli, tmp_path):
    code, out, _ = cli("list", "topics", "-f", "csv", "--db", with_topics)
    assert code == 0
    (row,) = _csv(out)
    assert (row["name"], row["n_topics"], row["qrels_topics"]) == ("sample-collection-topics", "8", "sample (8/8)")
    docs = tmp_path / "sample-docs.tsv"
    docs.write_text("doc-S01-001\tsome text\n")
    assert cli("ingest", "docs", docs, "--db", with_topics)[0] == 0
    code, out, _ = cli("list", "docs", "-f", "csv", "--db", with_topics)
    assert code == 0 and [(r["name"], r["n_docs"]) for r in _csv(out)] == [("sample-docs", "1")]


def test_per_topic_outputs_show_the_query(with_topics, cli):
    code, out, _ = cli("eval", "-m", "AP", "-r", "bm25", "--per-topic", "-f", "csv", "--db", with_topics)
    rows = _csv(out)
    assert code == 0 and list(rows[0]) == ["run", "qrels", "topic", "metric", "value", "query"]
    assert all(r["query"] == QUERIES[r["topic"]] for r in rows)
    code, out, _ = cli("export", "leaderboard", "-m", "AP", "--per-topic", "-o", "-", "-f", "csv", "--db", with_topics)
    rows = _csv(out)
    assert code == 0 and len(rows) == 6 * 8 and all(r["query"] == QUERIES[r["topic"]] for r in rows)
    code, out, _ = cli("compare", "-b", "bm25", "-r", "dense", "-m", "AP", "--per-topic", "-f", "csv", "--no-save",
                       "--db", with_topics)  # fmt: skip
    rows = _csv(out)
    assert code == 0 and len(rows) == 8 and all(r["query"] == QUERIES[r["topic"]] for r in rows)
    code, out, _ = cli("explain", "AP", "--run", "bm25", "--topic", "S02", "--db", with_topics)
    assert code == 0 and "topic S02: query of S02" in out
    code, out, _ = cli("explain", "AP", "--run", "bm25", "--topic", "S02", "-f", "json", "--db", with_topics)
    assert json.loads(out)["query"] == "query of S02"
    code, out, _ = cli("eval", "-m", "AP", "-r", "bm25", "--per-topic", "-f", "trec", "--db", with_topics)
    assert code == 0 and "query of" not in out  # trec_eval's layout stays trec_eval's


def test_the_newest_topic_set_gives_the_query(with_topics, tmp_path):
    newer = tmp_path / "newer.tsv"
    newer.write_text("S01\tnewer text\n")
    with evalstore.open(with_topics) as s:
        s.ingest_topics(newer)
        res = s.evaluate("sample", ["bm25"], ["AP"])
    assert res.queries["S01"] == "newer text" and res.queries["S02"] == "query of S02"


def test_no_topic_sets_no_query_column(sample_db, cli):
    code, out, _ = cli("eval", "-m", "AP", "-r", "bm25", "--per-topic", "-f", "csv", "--db", sample_db)
    assert code == 0 and out.splitlines()[0] == "run,qrels,topic,metric,value"

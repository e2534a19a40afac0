"""The stored pools: listing, and the file the assessors get (sorted by topic and docno, in qrels
lines with grade -1 or in pairs, written through a temporary file)."""

from __future__ import annotations

import os

import pytest

from evalstore.errors import NotFoundError, PoolError
from evalstore.pool.manage import pool_runs


@pytest.fixture
def with_pool(store):
    # B ranks its documents so that the pool's order by rank or by run would not be the docno order
    store.ingest_run({"t2": {"z9": 3.0, "a1": 2.0}, "t10": {"m5": 1.0}}, name="B")
    store.ingest_run({"t2": {"k3": 1.0}, "t10": {"b2": 2.0, "m5": 1.0}}, name="A")
    store.pool("p", depth=2)
    return store


def test_the_qrels_file_is_sorted_by_topic_then_docno(with_pool, tmp_path):
    out = tmp_path / "pool.qrels"
    res = with_pool.export_pool("p", out)
    # byte order: t10 before t2, and the documents of a topic by docno, whatever run brought them
    assert out.read_text() == "t10 0 b2 -1\nt10 0 m5 -1\nt2 0 a1 -1\nt2 0 k3 -1\nt2 0 z9 -1\n"
    assert res.summary() == f"wrote pool 'p' to {out}: 5 lines (topic 0 doc -1)"
    # what an assessor returns is a qrels file evalstore reads: -1 is pooled, not judged yet
    with_pool.ingest_qrels(out, name="to_judge")
    assert with_pool.sql("SELECT count(*) FROM qrels WHERE qrels = 'to_judge' AND grade = -1").rows == [(5,)]


def test_pairs_and_standard_output(with_pool, tmp_path, capsysbinary):
    out = tmp_path / "pairs.txt"
    with_pool.export_pool("p", out, format="pairs")
    assert out.read_text().splitlines()[:2] == ["t10 b2", "t10 m5"]
    res = with_pool.export_pool("p", "-")
    assert capsysbinary.readouterr().out.decode().startswith("t10 0 b2 -1\n")
    assert res.path is None and res.n_lines == 5


def test_a_failed_export_leaves_no_file(with_pool, tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(PoolError, match="as qrels or pairs, not 'csv'"):
        with_pool.export_pool("p", folder / "x", format="csv")
    with pytest.raises(NotFoundError, match="no pool named 'q'"):
        with_pool.export_pool("q", folder / "x")
    # a write that fails halfway leaves neither the file nor its temporary file
    (folder / "x").write_text("before\n")

    def broken(batch):
        raise OSError("disk full")

    monkeypatch.setattr("evalstore.pool.manage.text_bytes", broken)
    with pytest.raises(OSError, match="disk full"):
        with_pool.export_pool("p", folder / "x")
    assert os.listdir(folder) == ["x"] and (folder / "x").read_text() == "before\n"


def test_the_pools_are_listed_with_their_recipe(with_pool):
    rows = with_pool.list_pools().records()
    assert [(r["name"], r["strategy"], r["depth"], r["n_topics"], r["n_docs"]) for r in rows] == [
        ("p", "depth", 2, 2, 5)
    ]
    assert pool_runs(with_pool, "p") == ["A", "B"]

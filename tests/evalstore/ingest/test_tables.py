"""Runs and qrels read into Arrow tables without a store (evalstore/ingest/tables.py): the rows a
store's ingest stores, and its messages, with no Store opened."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from support import FIXTURES

import evalstore
from evalstore import store as store_module
from evalstore.errors import IngestError
from evalstore.ingest.tables import read_qrels, read_run, read_runs

INGEST = FIXTURES / "ingest"


@contextmanager
def no_store(monkeypatch) -> Iterator[None]:
    """Reading files must not open a store (no throw-away in-memory Store)."""

    def refuse(*a, **k):
        raise AssertionError("a store was opened")

    with monkeypatch.context() as m:
        m.setattr(store_module, "open", refuse)
        yield


def _stored_qrels(path, fmt):
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(path), name="q", format=fmt, progress=False)
        return s.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = 'q' ORDER BY topic, doc").rows


def _stored_run(paths, fmt, name="r"):
    with evalstore.open(":memory:") as s:
        s.ingest_run(paths, name=name, format=fmt, progress=False)
        return s.sql(
            "SELECT topic, doc, rank, line_no FROM run_rows WHERE run = ? ORDER BY topic, line_no", [name]
        ).rows


@pytest.mark.parametrize(
    "path, fmt",
    [(INGEST / "qrels_ntcir.txt", "ntcir"), (INGEST / "ntcir_rel", "ntcir"), (INGEST / "qrels_small.txt", "trec")],
)
def test_qrels_files_read_as_the_store_stores_them(path, fmt, monkeypatch):
    source = str(path / "*") if path.is_dir() else str(path)
    expected = _stored_qrels(source, fmt)
    with no_store(monkeypatch):
        with_reader = read_qrels(source, fmt)
    got = sorted(zip(*(with_reader.column(c).to_pylist() for c in ("topic", "doc", "grade"))))
    assert got == sorted(expected)
    assert len(got) > 2


def test_ntcir_res_files_read_as_one_run_ranked_in_file_order(monkeypatch):
    paths = str(INGEST / "ntcir_res" / "*")
    expected = _stored_run(paths, "ntcir")
    with no_store(monkeypatch):
        table = read_run(paths, "ntcir")
    got = sorted(zip(*(table.column(c).to_pylist() for c in ("topic", "doc", "rank", "ln"))))
    assert got == sorted(tuple(r) for r in expected)
    assert [r for r in got if r[0] == "q1"][:2] == [("q1", "dA", 2, 2), ("q1", "dC", 1, 1)]


def test_a_run_the_fast_reader_declines_gets_the_general_reader_without_a_store(tmp_path, monkeypatch):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 tag\nq1  Q0 d2 2 1.0 tag\n")  # two spaces: the general reader
    with no_store(monkeypatch):
        parts = [p for batch in read_runs(str(run), "trec") for p in batch]
    assert [p.name for p in parts] == ["tag"]
    assert parts[0].table.column("doc").to_pylist() == ["d1", "d2"]
    assert parts[0].table.column("rank").to_pylist() == [1, 2]


def test_a_bad_file_gets_ingests_message_without_a_store(tmp_path, monkeypatch):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 dA L2\nq1 dB Lx\n")
    with evalstore.open(":memory:") as s, pytest.raises(IngestError) as stored:
        s.ingest_qrels(str(qrels), name="qrels", format="ntcir", progress=False)
    with no_store(monkeypatch), pytest.raises(IngestError) as read:
        read_qrels(str(qrels), "ntcir")
    assert str(read.value) == str(stored.value)
    assert "line 2" in str(read.value)


def test_objects_are_read_by_the_same_functions():
    assert read_qrels({"q1": {"d1": 1}}).num_rows == 1
    assert read_run({"q1": {"d1": 1.0, "d2": 0.5}}).num_rows == 2
    with pytest.raises(IngestError):
        read_qrels(str(INGEST / "qrels_small.txt"), "no-such-format")

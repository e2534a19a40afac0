"""record_run: a run recorded by content; the same rows store nothing, other rows a new run."""

from __future__ import annotations

import pytest

import evalstore
from evalstore.errors import IngestError
from evalstore.ingest.recorded import record_run

RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.5}}


def test_the_same_rows_store_nothing_and_other_rows_are_a_new_run():
    with evalstore.open(":memory:") as store:
        first = record_run(store, "bm25", RUN, {"tag": "bm25", "method": {"retrieval": [{"name": "bm25"}]}})
        assert (first.name, first.status, first.n_rows) == ("bm25", "added", 3)
        # the same rows in another order: the same content
        again = record_run(store, "bm25", {"q2": {"d3": 1.5}, "q1": {"d2": 1.0, "d1": 2.0}})
        assert (again.name, again.status, again.sha256) == ("bm25", "unchanged", first.sha256)
        other = record_run(store, "bm25", {"q1": {"d1": 2.0, "d2": 3.0}, "q2": {"d3": 1.5}})
        assert (other.name, other.status) == (f"bm25@{other.sha256[:8]}", "added")
        assert record_run(store, "bm25", {"q1": {"d1": 2.0, "d2": 3.0}, "q2": {"d3": 1.5}}).status == "unchanged"
        rows = store.sql("SELECT name, metadata->>'$.method.retrieval[0].name' FROM runs ORDER BY name").rows
        assert rows == [("bm25", "bm25"), (other.name, None)]
        # the content hash is the one ingest_run gives the same rows
        store.ingest_run(RUN, name="copy")
        assert store.sql("SELECT sha256 FROM runs WHERE name = 'copy'").rows == [(first.sha256,)]


def test_a_name_with_like_characters_is_taken_literally():
    with evalstore.open(":memory:") as store:
        record_run(store, "a_b%", RUN)
        record_run(store, "axb", {"q1": {"d9": 1.0}})
        assert record_run(store, "a_b%", RUN).status == "unchanged"
        assert record_run(store, "axb", RUN).name == "axb@" + record_run(store, "a_b%", RUN).sha256[:8]
        with pytest.raises(IngestError, match="empty"):
            record_run(store, " ", RUN)

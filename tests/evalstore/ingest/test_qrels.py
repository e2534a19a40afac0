"""Ingesting qrels (evalstore/ingest/qrels.py): declared gains are one rule whatever the qrels are
given as."""

from __future__ import annotations

import pytest

import evalstore
from evalstore.errors import IngestError

QRELS = {"q1": {"d1": 1, "d2": 2}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}}


def test_gains_declared_with_dict_qrels_are_stored_and_used(tmp_path):
    # issue 39.5: the gains of dict qrels were dropped (nDCG 0.8597 instead of the file's 0.6876)
    f = tmp_path / "q.txt"
    f.write_text("q1 0 d1 1\nq1 0 d2 2\n")
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(QRELS, name="from_dict", gains="1:10", progress=False)
        s.ingest_qrels(f, name="from_file", gains="1:10", progress=False)
        s.ingest_run(RUN, name="r", progress=False)
        assert s.sql("SELECT name, default_gains FROM qrels_meta ORDER BY name").rows == [
            ("from_dict", "1:10"),
            ("from_file", "1:10"),
        ]
        d = s.evaluate("from_dict", None, ["nDCG"], save=False).means[0][2]
        f_ = s.evaluate("from_file", None, ["nDCG"], save=False).means[0][2]
    assert d == f_ == pytest.approx(0.6875501677789772)


@pytest.mark.parametrize("gains", ["a:b", [float("nan")], [1, float("inf")], "3:1", [-1]])
def test_bad_gains_are_refused_for_dicts_as_for_files(gains, tmp_path):
    f = tmp_path / "q.txt"
    f.write_text("q1 0 d1 1\n")
    with evalstore.open(":memory:") as s:
        for qrels in (QRELS, f):
            with pytest.raises(IngestError, match="gains"):
                s.ingest_qrels(qrels, name="x", gains=gains, progress=False)
        assert s.qrels_names() == []

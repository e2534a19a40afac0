"""Evaluation of a store's runs (evalstore/evaluation/stored.py) on a store opened read-only: stored
scores are reused, what is missing is computed and not stored, and the result says so."""

from __future__ import annotations

import pytest
from support import sha256_of

import evalstore

QA = {f"a{t}": {f"d{i}": i % 3 for i in range(10)} for t in range(6)}
QB = {f"b{t}": {f"d{i}": i % 2 for i in range(10)} for t in range(6)}


def _run(prefix: str, k: int) -> dict:
    return {f"{prefix}{t}": {f"d{(i * k + t) % 10}": 10.0 - i for i in range(10)} for t in range(6)}


@pytest.fixture
def two_collections(tmp_path):
    """Two collections (qrels and runs sharing no topic) and subsamples, nDCG@10 stored."""
    path = tmp_path / "two.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(QA, name="dl19", progress=False)
        s.ingest_qrels(QB, name="dl20", progress=False)
        for k in (1, 3, 7):
            s.ingest_run(_run("a", k), name=f"a{k}", progress=False)
            s.ingest_run(_run("b", k), name=f"b{k}", progress=False)
        s.create_subsamples("dl19", "0.5", trials=2, seed=1)
        s.evaluate("dl19", None, ["nDCG@10"])
        s.evaluate("dl20", None, ["nDCG@10"])
        s.evaluate_subsamples("dl19", None, ["nDCG@10"])
    return path


def test_a_read_only_store_reuses_stored_scores(two_collections):
    before = sha256_of(two_collections)
    with evalstore.open(two_collections) as w:
        want = w.evaluate("dl19", None, ["nDCG@10"], save=False).means
    with evalstore.open(two_collections, read_only=True) as s:
        r = s.evaluate("dl19", metrics=["nDCG@10"])
        assert r.means == want and (r.reused, r.computed) == (3, 0)
        assert not any("read-only" in n for n in r.notes)
    assert sha256_of(two_collections) == before


def test_what_a_read_only_store_cannot_store_is_computed_and_said(two_collections):
    # issue 39.10: a raw InvalidInputException (DELETE ... read-only mode) from a notebook
    before = sha256_of(two_collections)
    with evalstore.open(two_collections, read_only=True) as s:
        r = s.evaluate("dl19", metrics=["nDCG@10", "AP"], ci="t", rank_ci="bootstrap", trials=100)
        assert (r.reused, r.computed) == (3, 3) and len(r.means) == 6 and r.intervals and r.rank_intervals
        assert any("3 evaluation(s) (run, qrels set, metric) were computed" in n for n in r.notes)
        assert any("intervals were computed and not stored" in n for n in r.notes)
        subs = s.evaluate_subsamples("dl19", None, ["AP"])
        assert all(any("read-only" in n for n in res.notes) for res in subs.values())
        with pytest.raises(evalstore.StoreError, match="is open read-only, and this changes it"):
            s.create_subsamples("dl19", "0.3", trials=1, seed=2)
        with pytest.raises(evalstore.StoreError, match="is open read-only, and this changes it"):
            s.fuse(["a1", "a3"], "rrf", name="f")
        assert s.sql("SELECT count(*) FROM evaluations WHERE metric = 'AP'").rows == [(0,)]
    assert sha256_of(two_collections) == before

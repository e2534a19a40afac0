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


#: one metric of each aggregate: mean, gmean (trec_eval's gm_map) and sum (a count)
SUMMARY_METRICS = ["AP", "gm_map", "num_rel_ret"]


def _summaries(s, qrels: str) -> dict:
    return {
        (run, metric): (summary, n)
        for run, metric, summary, n in s.sql(
            "SELECT r.name, e.metric, e.summary, e.n_topics FROM evaluations e JOIN run_meta r USING (run_id) "
            "JOIN qrels_meta q USING (qrels_id) WHERE q.name = ?",
            [qrels],
        ).rows
    }


def test_each_stored_evaluation_keeps_the_mean_the_result_gave(two_collections):
    with evalstore.open(two_collections) as s:
        result = s.evaluate("dl19", None, SUMMARY_METRICS)
        stored = _summaries(s, "dl19")
    assert len(result.means) == 9
    for run, metric, summary, n in result.means:
        assert stored[(run, result.stored_names[metric])] == (summary, n)  # the same double


def test_evaluating_again_reads_the_stored_means_and_computing_never_does(two_collections):
    """Every score reused: the means are the stored ones (a summary changed by hand shows); a
    summary not known (NULL, a layout written before migration 23) is computed from the scores;
    scores computed and not stored never take a stored summary."""
    with evalstore.open(two_collections) as s:
        want = {(r, m): v for r, m, v, _ in s.evaluate("dl19", None, SUMMARY_METRICS).means}
        s.sql("UPDATE evaluations SET summary = 42.0 WHERE metric = 'AP'", write=True)
        again = s.evaluate("dl19", None, SUMMARY_METRICS)
        assert again.computed == 0
        assert {(r, m): v for r, m, v, _ in again.means} == {k: 42.0 if k[1] == "AP" else v for k, v in want.items()}
        fresh = s.evaluate("dl19", None, SUMMARY_METRICS, save=False, recompute=True)
        assert {(r, m): v for r, m, v, _ in fresh.means} == want
        s.sql("UPDATE evaluations SET summary = NULL WHERE metric = 'AP' AND run_id = 1", write=True)
        # one summary not known: every mean of the result is computed from the scores
        assert {(r, m): v for r, m, v, _ in s.evaluate("dl19", None, ["AP", "gm_map"]).means} == {
            k: v for k, v in want.items() if k[1] != "num_rel_ret"
        }

"""Intervals on every mean (issue 24, part 3): the t interval against scipy and statsmodels, the
bootstrap interval against a direct numpy computation, geometric means on the log scale, sums
without one; storing them with the evaluation, the leaderboard view's ci_* columns, the CLI."""

from __future__ import annotations

import glob
import json
import math

import numpy as np
import pytest
from support import SAMPLE

import evalstore
from evalstore.errors import MetricError
from evalstore.intervals.means import IntervalSpec, compute, spec

METRICS = ["AP", "nDCG@10", "P@10", "RR", "GM_AP", "NumRet"]


def per_run(result, metric):
    out = {}
    for r, _, m, v in result.per_topic:
        if m == metric and v is not None and not math.isnan(v):
            out.setdefault(r, []).append(v)
    return out


def scipy_t(x, level):
    from scipy import stats

    x = np.asarray(x)
    return stats.t.interval(level, len(x) - 1, loc=x.mean(), scale=stats.sem(x))


def numpy_bootstrap(x, B, seed, level):
    """The percentile interval, computed directly: B resamples of the topics from default_rng(seed)."""
    x = np.asarray(x)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(B, len(x)))
    means = x[idx].mean(axis=1)
    return np.quantile(means, [(1 - level) / 2, (1 + level) / 2])


def check_agreement(result, level=0.95, B=1000, seed=0) -> int:
    """Every interval of every run and metric against scipy (t), statsmodels (t) and numpy
    (bootstrap); returns the number of intervals checked."""
    from statsmodels.stats.weightstats import DescrStatsW

    n = 0
    t = dict(((r, m), (lo, hi)) for r, m, lo, hi in compute(result, spec("t", level)))
    boot = dict(((r, m), (lo, hi)) for r, m, lo, hi in compute(result, spec("bootstrap", level, B, seed)))
    for m in result.metrics:
        for run, x in per_run(result, m).items():
            agg = result.aggregates[m]
            if agg == "sum":
                assert t[(run, m)] == (None, None) == boot[(run, m)]
                continue
            y = np.log(np.maximum(x, 1e-5)) if agg == "gmean" else np.asarray(x)
            f = np.exp if agg == "gmean" else (lambda v: v)
            if np.std(y) > 0:  # scipy refuses scale 0 (nan); statsmodels and evalstore give (mean, mean)
                assert t[(run, m)] == pytest.approx(f(np.array(scipy_t(y, level))), rel=1e-12, abs=1e-15)
            else:
                assert t[(run, m)] == pytest.approx((f(y[0]), f(y[0])), rel=1e-15)
            sm = DescrStatsW(y).tconfint_mean(alpha=1 - level)
            assert t[(run, m)] == pytest.approx(f(np.array(sm)), rel=1e-12, abs=1e-15)
            assert boot[(run, m)] == pytest.approx(f(numpy_bootstrap(y, B, seed, level)), rel=1e-12, abs=1e-15)
            n += 2
    return n


def test_t_and_bootstrap_against_scipy_statsmodels_numpy(sample_store):
    result = sample_store.evaluate("sample", None, METRICS, save=False, progress=False)
    assert check_agreement(result) == 2 * 5 * 6  # methods x metrics with an interval x runs
    assert check_agreement(result, level=0.9, B=500, seed=7) == 60


@pytest.mark.shared
@pytest.mark.slow
def test_trec_dl_2019_agreement(shared_dir):
    d = shared_dir / "data" / "trec-dl-2019-passage"
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted(glob.glob(str(d / "runs" / "*.gz"))), progress=False)
        result = s.evaluate("dl19", None, METRICS, save=False, progress=False)
        n_runs = len(s.run_names())
        assert check_agreement(result, B=2000, seed=1) == 2 * 5 * n_runs


def test_a_hand_computed_t_interval():
    """Scores 0.2, 0.4, 0.6 of three topics: mean 0.4, sd 0.2, sem 0.2/sqrt(3) = 0.11547;
    t_{0.975, 2} = 4.302653 (a t table); half-width 4.302653 * 0.115470 = 0.496828;
    the interval (0.4 - 0.496828, 0.4 + 0.496828) = (-0.096828, 0.896828)."""
    from evalstore.results.eval_result import EvalResult

    r = EvalResult("q", ["AP"], {"AP": "AP"}, [("a", t, "AP", v) for t, v in zip("123", (0.2, 0.4, 0.6))])
    r.means = [("a", "AP", 0.4, 3)]
    r.aggregates = {"AP": "mean"}
    lo, hi = r.add_intervals("t").interval("a", "AP")
    half = 4.302653 * 0.2 / math.sqrt(3)  # t_{0.975, 2} to the table's 7 digits
    assert (lo, hi) == pytest.approx((0.4 - half, 0.4 + half), rel=1e-6)
    assert round(lo, 6) == -0.096828 and round(hi, 6) == 0.896828
    r.per_topic = r.per_topic[:1]
    r.means = [("a", "AP", 0.2, 1)]
    assert r.add_intervals("t").interval("a", "AP") == (None, None)  # one topic: no interval


def test_spec_checks():
    assert spec("t", 0.9) == IntervalSpec("t", 0.9)
    assert spec("bootstrap", 0.95, 200, 3) == IntervalSpec("bootstrap", 0.95, 200, 3)
    for bad in (0.0, 1.0, 95, True):
        with pytest.raises(MetricError, match="confidence level"):
            spec("t", bad)
    with pytest.raises(MetricError, match="unknown interval"):
        spec("wald")
    with pytest.raises(MetricError, match="trials"):
        spec("bootstrap", 0.95, 0)


def test_result_columns(sample_store):
    pytest.importorskip("pandas")
    result = sample_store.evaluate("sample", ["bm25", "dense"], ["AP", "NumRet"], progress=False)
    result.add_intervals("bootstrap", trials=300, seed=2)
    wide = result.to_df(means=True)
    assert list(wide.columns) == ["run", "AP", "AP lo", "AP hi", "NumRet", "NumRet lo", "NumRet hi"]
    assert wide["NumRet lo"].isna().all() and (wide["AP lo"] < wide["AP"]).all() and (wide["AP"] < wide["AP hi"]).all()
    long = result.to_df(means=True, wide=False)
    assert list(long.columns) == ["run", "metric", "value", "n_topics", "lo", "hi"]
    table = result.to_arrow(means=True)
    assert table.column_names == ["run", "metric", "value", "n_topics", "lo", "hi"]


def test_stored_with_the_evaluation(sample_store):
    s = sample_store
    result = s.evaluate("sample", None, ["AP", "GM_AP", "NumRet"], ci="t", progress=False)
    lb = {
        (r, m): (lo, hi, meth, lvl)
        for r, m, lo, hi, meth, lvl in s.sql(
            "SELECT run, metric, ci_lo, ci_hi, ci_method, ci_level FROM leaderboard WHERE qrels = 'sample'"
        ).rows
    }
    for run, m, lo, hi in result.intervals:
        stored = result.stored_names[m]
        if m == "NumRet":
            assert lb[(run, stored)] == (None, None, None, None)
        else:
            assert lb[(run, stored)] == (lo, hi, "t", 0.95)
    # the leaderboard keeps migration 10's columns, in order, and adds the interval's (then migration
    # 15's rank columns: tests/evalstore/stats/test_rank_intervals.py)
    cols = [c for c in s.sql("SELECT * FROM leaderboard LIMIT 0").columns]
    assert cols[:12] == ["run", "qrels", "metric", "mean", "n_topics", "aggregate", "params", "subsample",
                         "ci_lo", "ci_hi", "ci_method", "ci_level"]  # fmt: skip
    # a bootstrap interval computed later is the one the leaderboard shows; both stay in `intervals`
    s.evaluate("sample", ["bm25"], ["AP"], ci="bootstrap", trials=200, seed=5, progress=False)
    rows = s.sql("SELECT method, trials, seed FROM intervals WHERE run = 'bm25' AND metric = 'AP' ORDER BY method").rows
    assert rows == [("bootstrap", 200, 5), ("t", None, None)]
    assert s.sql("SELECT ci_method FROM leaderboard WHERE run = 'bm25' AND metric = 'AP'").rows == [("bootstrap",)]
    # evaluated again: the old intervals leave the views, and the next save removes them
    s.evaluate("sample", ["bm25"], ["AP"], recompute=True, progress=False)
    assert s.sql("SELECT ci_lo FROM leaderboard WHERE run = 'bm25' AND metric = 'AP'").rows == [(None,)]
    assert s.sql("SELECT count(*) FROM intervals WHERE run = 'bm25' AND metric = 'AP'").rows == [(0,)]
    s.evaluate("sample", ["dense"], ["AP"], ci="t", progress=False)
    assert s.sql("SELECT count(*) FROM interval_data i JOIN run_meta r USING (run_id) WHERE r.name = 'bm25' "
                 "AND i.metric = 'AP'").rows == [(0,)]  # fmt: skip
    # not saved: nothing stored
    before = s.sql("SELECT count(*) FROM interval_data").rows
    s.evaluate("sample", ["random"], ["P@5"], ci="t", save=False, progress=False)
    assert s.sql("SELECT count(*) FROM interval_data").rows == before
    # dropping a run drops its intervals
    s.drop_runs("dense")
    assert s.sql("SELECT count(*) FROM interval_data i WHERE i.run_id NOT IN (SELECT run_id FROM run_meta)").rows == [
        (0,)
    ]


def test_one_place_attaches_intervals_for_stored_runs_files_and_subsamples(sample_store):
    """Store.evaluate, evalstore.evaluate (files, nothing stored) and Store.evaluate_subsamples (stored)
    take the same interval options and give the same intervals for the same scores."""
    s = sample_store
    stored = s.evaluate("sample", ["bm25"], ["AP"], ci="bootstrap", trials=200, seed=4, rank_ci="t", progress=False)
    files = evalstore.evaluate(
        SAMPLE / "qrels.txt", [SAMPLE / "runs" / "bm25.txt"], ["AP"], ci="bootstrap", trials=200, seed=4, rank_ci="t"
    )
    assert files.intervals == stored.intervals and files.interval_spec == stored.interval_spec
    assert files.rank_spec == stored.rank_spec
    s.create_subsamples("sample", "0.5", seed=1)
    results = s.evaluate_subsamples("sample", ["bm25", "dense"], ["AP"], "0.5", ci="t", progress=False)
    assert [r.interval_spec for r in results.values()] == [IntervalSpec("t", 0.95)] * 2
    sub = list(results)[1]
    n = s.sql("SELECT count(*) FROM intervals WHERE qrels = ? AND method = 't'", [sub]).rows
    assert n == [(2,)]
    with pytest.raises(MetricError, match="level"):  # checked before any work
        evalstore.evaluate(SAMPLE / "qrels.txt", [SAMPLE / "runs" / "bm25.txt"], ["AP"], ci="t", level=2)


def test_cli(sample_db, cli, tmp_path):
    code, out, err = cli("eval", "--db", sample_db, "-m", "AP", "-m", "NumRet", "--ci", "t", "-f", "csv")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "run,qrels,n_topics,AP,AP lo,AP hi,NumRet"
    assert "95 % t interval of the mean over the topics" in err
    code, out, err = cli(
        "sql", "--db", sample_db, "-f", "json", "SELECT run, ci_lo, ci_hi FROM leaderboard WHERE metric = 'AP'"
    )
    assert all(r["ci_lo"] is not None and r["ci_lo"] < r["ci_hi"] for r in json.loads(out))
    target = tmp_path / "lb.csv"
    code, out, err = cli(
        "export", "leaderboard", "--db", sample_db, "-m", "nDCG@10", "--ci", "bootstrap", "-B", "200", "--seed", "3",
        "-o", target,
    )  # fmt: skip
    assert code == 0, err
    assert target.read_text().splitlines()[0] == "run,qrels,n_topics,nDCG@10,nDCG@10 lo,nDCG@10 hi"
    code, out, err = cli("eval", "--db", sample_db, "-m", "AP", "--ci", "t", "--level", "1.5")
    assert code == 2 and "--level" in err and "outside the range" in err
    code, out, err = cli("eval", "--db", sample_db, "-m", "AP", "--ci", "wald")
    assert code == 2
    qrels, run = SAMPLE / "qrels.txt", SAMPLE / "runs" / "bm25.txt"
    code, out, err = cli("eval", qrels, run, "-m", "AP", "--ci", "t", "-f", "csv")
    assert code == 0 and out.splitlines()[0] == "run,qrels,n_topics,AP,AP lo,AP hi"
    assert cli("subsample", "--db", sample_db, "--qrels", "sample", "--fractions", "0.5")[0] == 0
    code, out, err = cli("eval", "--db", sample_db, "-m", "AP", "--ci", "t", "--subsamples", "0.5", "-f", "csv")
    assert code == 0, err
    assert out.splitlines()[0] == "run,qrels,fraction,trial,n_topics,AP,AP lo,AP hi"
    code, out, err = cli(
        "sql", "--db", sample_db, "SELECT count(*) FROM leaderboard WHERE subsample AND ci_lo IS NOT NULL"
    )
    assert out.split()[-1] == "6"


@pytest.mark.parametrize("seed", [2**31, 2**63 - 1])
def test_every_documented_seed_is_stored(sample_db, cli, seed):
    """Issue 39.10: --seed 2147483648 (help: 0..2^63-1) failed with an INT32 conversion error after
    the scores were stored; the seeds of intervals and rank intervals are BIGINT (migration 17)."""
    code, _, err = cli(
        "eval", "-q", "sample", "-m", "AP", "--ci", "bootstrap", "--rank-ci", "bootstrap", "--trials", "200",
        "--seed", str(seed), "--db", sample_db,
    )  # fmt: skip
    assert code == 0, err
    with evalstore.open(sample_db, read_only=True) as s:
        assert s.sql("SELECT DISTINCT seed FROM intervals WHERE method = 'bootstrap'").rows == [(seed,)]
        assert s.sql("SELECT DISTINCT seed FROM rank_intervals").rows == [(seed,)]
        assert s.sql("SELECT count(*) FROM leaderboard WHERE rank_lo IS NOT NULL AND ci_lo IS NOT NULL").rows[0][0] == 6

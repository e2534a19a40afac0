"""Rank intervals (--rank-ci) and leaderboards over several qrels sets (--agg): the intervals hold
the observed rank and repeat exactly with the seed; the bootstrap draws are the paired bootstrap's
(the same resamples as the intervals of the means); t intervals by hand; stored with their
evaluations and shown by the leaderboard view only while they rank its whole board on current
scores; the CLI of eval, export leaderboard and compare."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import DATA_DIR, SAMPLE, need_shared

import evalstore
from evalstore.stats import rank_intervals as ri
from evalstore.stats.ranks import competition_ranks
from evalstore.stats.sampling import bootstrap_indices


def _contains(r: ri.RankIntervals) -> bool:
    return bool(np.all((r.lo <= r.rank) & (r.rank <= r.hi)))


def test_bootstrap_intervals_hold_the_rank_and_repeat_with_the_seed():
    rng = np.random.default_rng(1)
    X = rng.random((12, 40)) + np.linspace(0.3, 0, 12)[:, None]
    a = ri.bootstrap([X], ["mean"], trials=500, seed=9)
    b = ri.bootstrap([X], ["mean"], trials=500, seed=9)
    c = ri.bootstrap([X], ["mean"], trials=500, seed=10)
    assert _contains(a)
    assert (a.lo.tolist(), a.hi.tolist()) == (b.lo.tolist(), b.hi.tolist())
    assert (a.lo.tolist(), a.hi.tolist()) != (c.lo.tolist(), c.hi.tolist())
    assert a.rank.tolist() == competition_ranks(X.mean(axis=1)).tolist()


def test_bootstrap_is_the_paired_bootstrap_of_the_means_intervals():
    """All runs are summarised on the same resampled topics: the draws of stats.sampling, so the
    ranks of each resample are the ranks of the resampled means (checked by recomputing them)."""
    rng = np.random.default_rng(2)
    X = rng.random((5, 20))
    B, seed, level = 200, 4, 0.9
    idx = bootstrap_indices(20, B, seed)
    ranks = np.sort(competition_ranks(X[:, idx].mean(axis=2).T), axis=0)  # (B, runs)
    k = int(np.floor(B * (1 - level) / 2 + 1e-9))
    got = ri.bootstrap([X], ["mean"], trials=B, seed=seed, level=level)
    obs = competition_ranks(X.mean(axis=1))
    assert got.lo.tolist() == np.minimum(ranks[k], obs).tolist()
    assert got.hi.tolist() == np.maximum(ranks[B - 1 - k], obs).tolist()
    assert got.widened.tolist() == ((obs < ranks[k]) | (obs > ranks[B - 1 - k])).tolist()


def test_a_missed_rank_is_widened_and_said():
    """A run just above many runs of equal means ranks lower in almost every resample (Hall & Miller
    2009): its percentile interval misses rank 1, and is widened to it."""
    rng = np.random.default_rng(0)
    base = rng.random(30)
    noise = rng.normal(0, 0.05, (25, 30))
    X = np.vstack([base + 1e-6, base + noise - noise.mean(axis=1, keepdims=True)])  # all others: one mean
    got = ri.bootstrap([X], ["mean"], trials=400, seed=0)
    assert got.rank[0] == 1 and got.lo[0] == 1 and got.widened[0]
    assert _contains(got)


def test_t_intervals_by_hand():
    """Two runs far apart on every topic: ranks certain. Two identical runs: each could be 1 or 2,
    and neither beats the third, far worse one."""
    far = np.array([[0.9, 0.8, 0.85, 0.95], [0.1, 0.2, 0.15, 0.05]])
    got = ri.paired_t(far)
    assert (got.rank.tolist(), got.lo.tolist(), got.hi.tolist()) == ([1, 2], [1, 2], [1, 2])
    same = np.array([[0.5, 0.6, 0.4, 0.7], [0.5, 0.6, 0.4, 0.7], [0.1, 0.0, 0.05, 0.1]])
    got = ri.paired_t(same)
    assert got.rank.tolist() == [1, 1, 3] and got.lo.tolist() == [1, 1, 3] and got.hi.tolist() == [2, 2, 3]


def test_t_intervals_use_bonferroni_paired_t_intervals():
    """lo = 1 + runs whose paired t interval (level 1 - alpha/(R-1)) of other - run lies above 0."""
    from scipy.stats import t as t_dist

    rng = np.random.default_rng(3)
    X = rng.random((6, 25)) + np.linspace(0.4, 0, 6)[:, None]
    got = ri.paired_t(X, level=0.95)
    R, n = X.shape
    q = t_dist.ppf(1 - 0.05 / (R - 1) / 2, n - 1)
    for i in range(R):
        better = worse = 0
        for j in range(R):
            if j == i:
                continue
            d = X[j] - X[i]
            half = q * d.std(ddof=1) / np.sqrt(n)
            better += d.mean() - half > 0
            worse += d.mean() + half < 0
        assert (got.lo[i], got.hi[i]) == (1 + better, R - worse)
    assert _contains(got) and not got.widened.any()


def test_missing_topics_are_left_out_of_a_runs_mean():
    X = np.array([[0.5, np.nan, 0.7], [0.4, 0.4, 0.4]])
    assert ri.observed([X], ["mean"]).tolist() == pytest.approx([0.6, 0.4])
    got = ri.bootstrap([X], ["mean"], trials=100, seed=1)
    assert got.rank.tolist() == [1, 2] and _contains(got)


def test_over_several_collections():
    rng = np.random.default_rng(4)
    A, B = rng.random((4, 30)), rng.random((4, 12))
    A[0] += 0.5
    for how in ("mean", "borda"):
        got = ri.bootstrap([A, B], ["mean", "mean"], trials=300, seed=2, how=how)
        assert _contains(got) and got.rank[0] == 1
    with pytest.raises(ValueError, match="one collection"):
        ri.rank_intervals([A, B], ["mean", "mean"], "t")


def _all_at_once(mats, summaries, trials, seed, level, how):
    """The bootstrap's definition, straight: every collection's draws in one call (in turn from one
    generator), every resample's ranks kept and sorted."""
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, X.shape[1], size=(trials, X.shape[1])) for X in mats]
    rows = []
    for X, idx, s in zip(mats, draws, summaries):
        P = np.log(np.maximum(X, ri.GMEAN_FLOOR)) if s == "gmean" else X
        vals = P[:, idx]  # runs x trials x topics
        present = ~np.isnan(vals)
        sums, counts = np.where(present, vals, 0.0).sum(axis=2), present.sum(axis=2)
        rows.append(ri._summaries(sums, counts, s).T)  # trials x runs
    from evalstore.stats.ranks import across

    S = rows[0] if len(rows) == 1 else across(np.stack(rows, axis=1), how)
    ranks = np.sort(competition_ranks(S), axis=0)
    k = int(np.floor(trials * (1 - level) / 2 + 1e-9))
    return ranks[k], ranks[trials - 1 - k]


@pytest.mark.parametrize("memory", [None, 1 << 20, 1])
def test_blocks_of_any_size_give_the_definitions_intervals(memory):
    """Issue 39.4: the resamples are drawn and ranked in blocks sized from the memory limit (a
    limit of 1 byte: blocks of one resample), with the same numbers and intervals as all at once."""
    rng = np.random.default_rng(7)
    for case in range(6):
        R, C = 3 + case, 1 + case % 3
        mats = [np.round(rng.random((R, 5 + 7 * c)), 1) for c in range(C)]
        mats[0][0, 1] = np.nan
        summaries = ["mean", "gmean", "sum"][:C]
        how = ("mean", "borda")[case % 2]
        trials, seed, level = 301 + case, case, (0.95, 0.8)[case % 2]
        lo, hi = _all_at_once(mats, summaries, trials, seed, level, how)
        got = ri.bootstrap(mats, summaries, trials=trials, seed=seed, level=level, how=how, memory=memory)
        assert got.lo.tolist() == np.minimum(lo, got.rank).tolist()
        assert got.hi.tolist() == np.maximum(hi, got.rank).tolist()


def test_the_memory_of_a_bootstrap_does_not_grow_with_its_trials():
    """Issue 39.4: 5,000,000 trials peaked at 745 MB under --memory-limit 100MB (every draw kept);
    now the blocks of resamples fit the limit's share and the ranks are kept as counts."""
    import tracemalloc

    X = np.random.default_rng(3).random((6, 43))
    tracemalloc.start()
    try:
        got = ri.bootstrap([X], ["mean"], trials=400_000, seed=0, memory=100_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _contains(got)
    assert peak < 20 << 20, peak  # all at once: 400,000 x 43 draws alone are 138 MB


def test_eval_rank_ci_under_a_memory_limit(sample_db, cli):
    code, out, err = cli(
        "eval", "--qrels", "sample", "-m", "AP", "--rank-ci", "bootstrap", "--trials", "200000",
        "--memory-limit", "100MB", "--db", sample_db,
    )  # fmt: skip
    assert code == 0 and "rank" in out, err


# --------------------------------------------------------------------------- the store
@pytest.fixture
def judged(sample_store):
    sample_store.ingest_qrels(SAMPLE / "qrels.judge.txt", name="judge", progress=False)
    return sample_store


def _board(s, qrels="sample", metric="AP"):
    return s.sql(
        "SELECT run, rank, rank_lo, rank_hi, rank_method FROM leaderboard WHERE qrels = ? AND metric = ? "
        "ORDER BY rank, run",
        [qrels, metric],
    ).rows


def test_stored_with_the_evaluation_and_shown_by_the_leaderboard_view(sample_store):
    s = sample_store
    res = s.evaluate("sample", None, ["AP", "nDCG@10"], rank_ci="bootstrap", trials=300, seed=1, progress=False)
    assert len(res.rank_intervals) == 12 and res.rank_spec.method == "bootstrap"
    board = _board(s)
    assert [r[1] for r in board] == [1, 2, 3, 4, 5, 6]
    assert {r[0]: r[2:4] for r in board} == {r: (lo, hi) for r, m, _, lo, hi in res.rank_intervals if m == "AP"}
    assert all(lo <= k <= hi for _, k, lo, hi, _ in board) and {r[4] for r in board} == {"bootstrap"}
    cols = s.sql("SELECT * FROM leaderboard LIMIT 0").columns
    assert cols[-4:] == ["rank", "rank_lo", "rank_hi", "rank_method"]
    assert cols[:12] == ["run", "qrels", "metric", "mean", "n_topics", "aggregate", "params", "subsample",
                         "ci_lo", "ci_hi", "ci_method", "ci_level"]  # fmt: skip
    # the same seed again: the same rows
    again = s.evaluate("sample", None, ["AP"], rank_ci="bootstrap", trials=300, seed=1, progress=False)
    assert [x for x in again.rank_intervals] == [x for x in res.rank_intervals if x[1] == "AP"]
    # a ranking of two runs is stored, but it does not rank the board: the view keeps the full one
    s.evaluate("sample", ["bm25", "dense"], ["AP"], rank_ci="t", progress=False)
    assert _board(s) == board
    assert s.sql("SELECT count(*) FROM rank_intervals WHERE method = 't'").rows == [(2,)]
    # a t ranking of the whole board is the most recent: shown
    s.evaluate("sample", None, ["AP"], rank_ci="t", progress=False)
    assert {r[4] for r in _board(s)} == {"t"}
    # evaluated again: the rankings that read the old scores leave the view
    s.evaluate("sample", ["bm25"], ["AP"], recompute=True, progress=False)
    assert {r[2] for r in _board(s)} == {None}
    assert [r[1] for r in _board(s)] == [1, 2, 3, 4, 5, 6]


def test_dropping_a_run_removes_its_rows_and_hides_the_ranking(sample_store):
    s = sample_store
    s.evaluate("sample", None, ["AP"], rank_ci="bootstrap", trials=100, progress=False)
    s.drop_runs("random")
    assert {r[2] for r in _board(s)} == {None}  # 5 of 6 ranked runs left: not this board's ranking


def test_eval_cli_rank_columns_and_legend(sample_db, cli):
    code, out, err = cli(
        "eval", "--db", sample_db, "-m", "AP", "--rank-ci", "bootstrap", "--trials", "200", "-f", "csv"
    )
    assert code == 0, err
    header = out.splitlines()[0].split(",")
    assert header[:4] == ["rank", "rank_lo", "rank_hi", "run"]
    assert "paired bootstrap resamples of the topics" in err
    code, out2, _ = cli("eval", "--db", sample_db, "-m", "AP", "--rank-ci", "bootstrap", "--trials", "200", "-f", "csv")
    assert out2 == out  # the seed fixes them
    code, out, err = cli(
        "export", "leaderboard", "--db", sample_db, "-m", "AP", "--rank-ci", "t", "-o", "-", "-f", "json"
    )
    rows = json.loads(out)
    assert code == 0 and all(r["rank_lo"] <= r["rank"] <= r["rank_hi"] for r in rows)
    code, _, err = cli("eval", "--db", sample_db, "-m", "AP", "--rank-ci", "nope")
    assert code != 0 and "--rank-ci" in err


def test_eval_of_files_gets_rank_intervals_in_memory(cli):
    code, out, err = cli("eval", SAMPLE / "qrels.txt", *sorted((SAMPLE / "runs").glob("*.txt")), "-m", "nDCG@10",
                         "--rank-ci", "t", "-f", "csv")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[1].startswith("1,1,1,rerank,")


def test_across_collections_cli_and_api(judged, tmp_path, cli):
    s = judged
    board = s.leaderboard(["sample", "judge", "sample"], None, ["AP"], agg="borda", rank_ci="bootstrap", trials=200)
    assert board.qrels == ["sample", "judge"]  # each set counted once
    t = board.table()
    assert t.columns[:7] == ["rank", "rank_lo", "rank_hi", "run", "n_sets", "AP borda", "AP [sample]"]
    assert all(r[1] <= r[0] <= r[2] for r in t.rows) and t.rows[0][3] == "rerank"
    mean = s.leaderboard(["sample", "judge"], None, ["AP", "nDCG@10"], agg="mean")
    for row in mean.table().rows:
        assert row[3] == pytest.approx((row[4] + row[5]) / 2)
    with pytest.raises(evalstore.errors.MetricError, match="bootstrap"):
        s.leaderboard(["sample", "judge"], None, ["AP"], agg="mean", rank_ci="t")


def test_across_collections_on_the_command_line(sample_db, cli):
    code, _, err = cli("ingest", "qrels", SAMPLE / "qrels.judge.txt", "--name", "judge", "--db", sample_db)
    assert code == 0, err
    code, out, err = cli("eval", "--db", sample_db, "-q", "sample", "-q", "judge", "-m", "nDCG@10", "--agg", "borda",
                         "--rank-ci", "bootstrap", "-f", "csv")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == "rank,rank_lo,rank_hi,run,n_sets,nDCG@10 borda,nDCG@10 [sample],nDCG@10 [judge]"
    assert "Borda points (MTEB)" in err
    code, _, err = cli("eval", "--db", sample_db, "-q", "sample", "-q", "judge", "-m", "AP")
    assert code != 0 and "--agg" in err
    code, _, err = cli("eval", "--db", sample_db, "-q", "sample", "-q", "judge", "-m", "AP", "--agg", "mean",
                       "--rank-ci", "t")  # fmt: skip
    assert code != 0 and "bootstrap" in err
    code, out, err = cli("export", "leaderboard", "--db", sample_db, "-q", "sample", "-q", "judge", "-m", "AP",
                         "--agg", "mean", "-o", "-")  # fmt: skip
    assert code == 0 and out.splitlines()[0] == "rank,run,n_sets,AP mean,AP [sample],AP [judge]"


def test_compare_rank_ci(sample_store):
    cmp = sample_store.compare("sample", "bm25", None, ["AP"], rank_ci="bootstrap", trials=500, save=False)
    assert set(cmp.ranks) == {("AP", r) for r in cmp.runs}
    assert all(lo <= k <= hi for k, lo, hi in cmp.ranks.values())
    paper = cmp.report().tables[0]
    assert paper.columns == ["run", "AP", "AP rank"]
    data = cmp.report().data
    assert data.columns[-6:] == ["rank", "rank_lo", "rank_hi", "other_rank", "other_rank_lo", "other_rank_hi"]


@pytest.mark.shared
@pytest.mark.slow
def test_rank_intervals_on_dl2019(tmp_path):
    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    with evalstore.open(tmp_path / "dl.duckdb") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted((d / "runs").glob("*.gz")), progress=False)
        for method in ("bootstrap", "t"):
            res = s.evaluate("dl19", None, ["nDCG@10", "AP(rel=2)"], rank_ci=method, trials=1000, seed=0)
            assert len(res.rank_intervals) == 2 * 37
            assert all(lo <= k <= hi for _, _, k, lo, hi in res.rank_intervals)
            again = s.evaluate("dl19", None, ["nDCG@10", "AP(rel=2)"], rank_ci=method, trials=1000, seed=0)
            assert again.rank_intervals == res.rank_intervals
        board = s.sql("SELECT rank, rank_lo, rank_hi FROM leaderboard WHERE qrels = 'dl19' AND metric = 'nDCG@10'").rows
        assert len(board) == 37 and all(lo <= k <= hi for k, lo, hi in board)

"""Meta-evaluation on the store: score matrices, persisted analyses, SQL functions, robustness."""

import json

import numpy as np
import pytest

from evalstore import meta
from evalstore.ingest import run_from_dict
from evalstore.meta import MetaError
from evalstore.meta.persist import load_table
from evalstore.metrics.options import EvalOptions


def test_score_matrix_matches_scores_view(sample_store):
    m = meta.score_matrix(sample_store, "sample", "AP")
    assert m.runs == sample_store.run_names() and m.topics == [f"S0{i}" for i in range(1, 9)]
    assert m.values.shape == (6, 8) and m.metric == "AP" and m.aggregate == "mean"
    rows = sample_store.sql(
        "SELECT run, topic, value FROM scores WHERE qrels = 'sample' AND metric = ?", [m.metric]
    ).rows
    assert len(rows) == 48
    for run, topic, value in rows:
        assert m.values[m.runs.index(run), m.topics.index(topic)] == value
    lb = dict(sample_store.sql("SELECT run, mean FROM leaderboard WHERE metric = ?", [m.metric]).rows)
    assert np.allclose(m.means(), [lb[r] for r in m.runs], rtol=1e-12)
    # already evaluated: fetching again does not need evaluation
    again = meta.score_matrix(sample_store, "sample", "AP", evaluate=False)
    assert np.array_equal(again.values, m.values)


def test_missing_topics_are_explicit(sample_store):
    run_from_dict(sample_store, "partial", {"S01": {"S01-d001": 2.0, "x": 1.0}, "S02": {"S02-d003": 1.0}})
    with pytest.raises(MetaError, match="partial \\(6 of 8 topics\\).*missing='zero'"):
        meta.score_matrix(sample_store, "sample", "AP")
    z = meta.score_matrix(sample_store, "sample", "AP", missing="zero")
    assert z.filled == 6 and np.count_nonzero(z.values[z.runs.index("partial"), 2:]) == 0
    t = meta.score_matrix(sample_store, "sample", "AP", missing="drop-topics")
    assert t.topics == ["S01", "S02"] and len(t.dropped_topics) == 6 and not np.isnan(t.values).any()
    r = meta.score_matrix(sample_store, "sample", "AP", missing="drop_runs")
    assert "partial" not in r.runs and r.dropped_runs == ["partial"] and len(r.topics) == 8
    with pytest.raises(MetaError, match="unknown missing-topic policy"):
        meta.score_matrix(sample_store, "sample", "AP", missing="ignore")
    # evaluating with trec_eval -c scores unscored topics 0 too (another canonical name)
    c = meta.score_matrix(sample_store, "sample", "AP", options=EvalOptions(complete=True))
    assert "complete=true" in c.metric and np.array_equal(c.values, z.values)


def test_kendall_persisted_and_queryable(sample_store):
    import scipy.stats as st

    an = meta.kendall(sample_store, "sample", ["AP", "nDCG@10", "P@10"])
    assert an.analysis_id is not None
    rows = sample_store.sql(
        "SELECT metric_a, metric_b, tau, tau_b, p_value, spearman FROM meta_correlations "
        "WHERE analysis_id = ? ORDER BY col_a, col_b",
        [an.analysis_id],
    ).rows
    assert len(rows) == 3
    lb = sample_store.sql("SELECT run, metric, mean FROM leaderboard").rows
    means = {}
    for run, metric, mean in lb:
        means.setdefault(metric, {})[run] = round(mean, 12)  # as meta's ScoreMatrix.means()
    runs = sorted(means[rows[0][0]])
    for ma, mb, tau, tau_b, p, rho in rows:
        a, b = [means[ma][r] for r in runs], [means[mb][r] for r in runs]
        assert tau_b == pytest.approx(st.kendalltau(a, b).statistic, abs=1e-12)
        assert rho == pytest.approx(st.spearmanr(a, b).statistic, abs=1e-12)
        assert p == pytest.approx(meta.kendall_p(tau, 6))
    kind, seed, params, inputs = sample_store.sql(
        "SELECT kind, seed, params, inputs FROM meta_runs WHERE analysis_id = ?", [an.analysis_id]
    ).rows[0]
    assert kind == "kendall" and seed is None
    assert json.loads(params)["missing"] == "error"
    cols = json.loads(inputs)["columns"]
    assert [c["label"] for c in cols] == ["AP", "nDCG@10", "P@10"] and len(cols[0]["sha256"]) == 64


def test_kendall_needs_two_columns(sample_store):
    with pytest.raises(MetaError, match="at least two columns"):
        meta.kendall(sample_store, "sample", ["AP"])


def _strip(rows):
    return [tuple(r.values()) for r in rows]


def test_discpower_reproducible_with_seed(sample_store):
    a = meta.discpower(sample_store, "sample", ["AP", "nDCG@10"], trials=500, seed=3)
    b = meta.discpower(sample_store, "sample", ["AP", "nDCG@10"], trials=500, seed=3)
    c = meta.discpower(sample_store, "sample", ["AP", "nDCG@10"], trials=500, seed=4)
    order = "qrels, metric, run_a, run_b, test"
    ta = load_table(sample_store, "meta_pair_tests", a.analysis_id, order)
    tb = load_table(sample_store, "meta_pair_tests", b.analysis_id, order)
    tc = load_table(sample_store, "meta_pair_tests", c.analysis_id, order)
    assert len(ta) == 30 and _strip(ta) == _strip(tb) and _strip(ta) != _strip(tc)
    da = load_table(sample_store, "meta_discpower", a.analysis_id, "metric")
    assert _strip(da) == _strip(load_table(sample_store, "meta_discpower", b.analysis_id, "metric"))
    n_sig = sample_store.sql(
        "SELECT count(*) FILTER (WHERE significant) FROM meta_pair_tests WHERE analysis_id = ? AND metric LIKE 'AP%'",
        [a.analysis_id],
    ).rows[0][0]
    assert n_sig == [r for r in da if r["metric"].startswith("AP")][0]["n_significant"]
    # run_a is the run with the higher mean
    assert all(r["mean_a"] >= r["mean_b"] for r in ta)
    assert sample_store.sql(
        "SELECT seed, params->>'trials' FROM meta_runs WHERE analysis_id = ?", [a.analysis_id]
    ).rows[0] == (3, "500")


def test_sql_functions_agree_with_the_analyses(sample_store):
    an = meta.tests(
        sample_store, "sample", ["AP"], tests=["bootstrap", "t", "wilcoxon", "randomisation"], trials=400, seed=11
    )
    got = sample_store.sql(
        """
        SELECT p.test, p.p_value,
               CASE p.test WHEN 'bootstrap' THEN bootstrap_asl(x, y, 400, 11)
                           WHEN 't' THEN paired_t_p(x, y)
                           WHEN 'wilcoxon' THEN wilcoxon_p(x, y)
                           ELSE randomisation_p(x, y, 400, 11) END AS udf
        FROM meta_pair_tests p
        JOIN (SELECT a.run AS run_a, b.run AS run_b, list(a.value ORDER BY a.topic) AS x,
                     list(b.value ORDER BY b.topic) AS y
              FROM scores a JOIN scores b USING (qrels, metric, topic)
              WHERE a.qrels = 'sample' AND a.metric = 'AP'
              GROUP BY a.run, b.run) l USING (run_a, run_b)
        WHERE p.analysis_id = ?""",
        [an.analysis_id],
    ).rows
    assert len(got) == 60
    for test, p, udf in got:
        if test == "bootstrap":  # meta tests reports (count + 1) / (B + 1); the SQL function Sakai's ASL count / B
            udf = (round(udf * 400) + 1) / 401
        assert udf == pytest.approx(p, rel=1e-12, abs=1e-15), test
    with pytest.raises(Exception, match="different lengths"):
        sample_store.sql("SELECT bootstrap_asl([0.1, 0.2], [0.3], 100, 0)")


def test_swap_persisted_bins(sample_store):
    an = meta.swap(sample_store, "sample", ["AP"], trials=300, seed=1)
    n = sample_store.sql(
        "SELECT sum(comparisons), sum(swaps), count(*) FROM meta_swap_bins WHERE analysis_id = ?", [an.analysis_id]
    ).rows[0]
    assert n[0] == 15 * 300 and n[2] == 21 and 0 < n[1] < n[0]
    s = load_table(sample_store, "meta_swap", an.analysis_id)[0]
    assert s["abs_diff"] == pytest.approx(an.results["swap"][0].abs_diff)
    hi = sample_store.sql("SELECT hi FROM meta_swap_bins WHERE analysis_id = ? AND bin = 20", [an.analysis_id]).rows[0][
        0
    ]
    assert hi == float("inf")
    again = meta.swap(sample_store, "sample", ["AP"], trials=300, seed=1, save=False)
    assert again.rows("meta_swap") == an.rows("meta_swap") and again.rows("meta_swap_bins") == an.rows("meta_swap_bins")


def test_top_runs_and_means_only(sample_store):
    an = meta.discpower(sample_store, "sample", ["AP"], trials=200, top=3, save=False)
    assert an.inputs["runs"] == meta.top_runs(sample_store, "sample", "AP", 3)
    assert an.rows("meta_discpower")[0]["n_pairs"] == 3
    by = meta.kendall(sample_store, "sample", ["AP", "RR"], top=4, top_by="nDCG@10", save=False)
    nd = meta.score_matrix(sample_store, "sample", "nDCG@10")
    assert by.inputs["runs"] == [nd.runs[i] for i in np.argsort(-nd.means(), kind="stable")[:4]]
    assert by.params["top_by"] == "nDCG@10"
    with pytest.raises(MetaError, match="summarised by gmean"):
        meta.discpower(sample_store, "sample", ["GM_AP"], trials=200, save=False)


def test_robustness_over_subsamples(sample_store):
    from evalstore.subsample import create_subsamples

    create_subsamples(sample_store, "sample", [0.6, 0.2], trials=2, seed=5)
    an = meta.robustness(sample_store, "sample", ["AP", "nDCG@10"], trials=200, seed=2)
    trials = load_table(sample_store, "meta_robustness_trials", an.analysis_id, "metric, fraction, trial")
    assert len(trials) == 2 * (1 + 4)
    full = [r for r in trials if r["fraction"] == 1.0]
    assert all(r["tau"] == 1.0 and r["c12"] == 0 and r["c21"] == 0 for r in full)
    view = sample_store.sql(
        "SELECT metric, fraction, n_trials, tau_mean, disc_power, accuracy, g_mean, false_pos, "
        "false_neg FROM meta_robustness WHERE analysis_id = ? ORDER BY metric, fraction DESC",
        [an.analysis_id],
    ).records()
    curves = an.results["curves"]
    for v in view:
        c = next(c for c in curves[v["metric"]] if c["fraction"] == v["fraction"])
        assert v["n_trials"] == c["n_trials"] == (1 if v["fraction"] == 1.0 else 2)
        for k in ("tau_mean", "disc_power", "accuracy", "g_mean"):
            assert v[k] == pytest.approx(c[k], abs=1e-12)
        assert (v["false_pos"], v["false_neg"]) == (c["false_pos"], c["false_neg"])
    # the tau of a subsample row is the correlation of the two rankings
    m0 = meta.score_matrix(sample_store, "sample", "AP")
    r = next(r for r in trials if r["metric"] == "AP" and r["fraction"] == 0.2 and r["trial"] == 1)
    m1 = meta.score_matrix(sample_store, r["qrels"], "AP")
    assert r["tau"] == pytest.approx(meta.kendall_tau(m0.means(), m1.means()))
    knees = load_table(sample_store, "meta_knees", an.analysis_id, "metric, criterion")
    assert len(knees) == 4
    for k in knees:
        vals = {c["fraction"]: c["tau_mean" if k["criterion"] == "tau" else "accuracy"] for c in curves[k["metric"]]}
        assert meta.knee(list(vals), list(vals.values()), 0.9) == (k["knee"], k["knee_first"])
    with pytest.raises(MetaError, match="unknown test"):
        meta.robustness(sample_store, "sample", ["AP"], test="sign")

"""`fuse --optimize`: ranx's grid, every candidate evaluated in one pass and equal to evaluating it
as a stored run, ranx's choice among equal means, the warning, and ranx's optimize_fusion on the
sample collection."""

from __future__ import annotations

import importlib.util
import json

import pytest
from support import SAMPLE

import evalstore
from evalstore.errors import FusionError
from evalstore.fusion import optimize as opt
from evalstore.fusion.registry import METHODS


@pytest.fixture(scope="module")
def sample():
    s = evalstore.open(":memory:")
    s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
    yield s
    s.close()


def test_the_weight_grid_is_ranxs():
    grid, drops = opt.weight_grid(3, 0.1)
    assert len(grid) == 66 and drops == 4
    assert grid[0] == (0.0, 0.0, 1.0) and grid[-1] == (1.0, 0.0, 0.0)
    assert grid == sorted(grid)  # itertools.product's order
    assert all(sum(round(w * 10) for w in g) == 10 for g in grid)
    assert (0.2, 0.7, 0.1) in grid  # ranx drops it: 0.2 + 0.7 + 0.1 != 1.0 in floating point
    assert len(opt.weight_grid(2, 0.05)[0]) == 21
    with pytest.raises(FusionError, match="must divide 1"):
        opt.weight_grid(2, 0.3)
    with pytest.raises(FusionError, match="take a larger --step"):
        opt.weight_grid(8, 0.01)


@pytest.mark.skipif(
    importlib.util.find_spec("ranx") is None, reason="needs ranx (the test extra: pip install -e '.[test]')"
)
def test_the_weight_grid_is_ranxs_but_for_its_float_test():
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    for n, step in ((2, 0.1), (3, 0.1), (3, 0.05), (4, 0.25)):
        ours, drops = opt.weight_grid(n, step)
        theirs = get_trial_configs(get_possible_weights(step), n)
        kept = [g for g in ours if sum(g) == 1.0]
        assert [tuple(t) for t in theirs] == kept and len(ours) - len(kept) == drops


def test_parameter_grids():
    assert opt.param_grid(10, 100, 10) == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    phi = opt.param_grid(0.01, 0.99, 0.01)
    assert len(phi) == 99 and phi[0] == 0.01 and phi[-1] == 0.99 and 0.07 in phi
    assert METHODS["rrf"].params[0].grid == (10, 100, 10)


def test_bulk_evaluation_equals_one_evaluation_per_candidate(sample):
    res = sample.fuse(["bm25", "dense"], "wsum", name="opt", optimize="nDCG@10", qrels="sample")
    o = res.optimization
    assert o.searched == "weights" and len(o.candidates) == 11
    for i, cand in enumerate(o.candidates):
        name = f"cand{i}"
        sample.fuse(["bm25", "dense"], "wsum", name=name, weights=list(cand["weights"]))
        mean = sample.evaluate("sample", [name], ["nDCG@10"], save=False).mean(name, "nDCG@10")
        assert o.means[i] == mean, cand
    best = max(o.means)
    assert o.score == best and o.chosen == max(i for i, m in enumerate(o.means) if m == best)
    assert res.recipe.weights == o.best["weights"]
    stored = sample.evaluate("sample", ["opt"], ["nDCG@10"], save=False).mean("opt", "nDCG@10")
    assert stored == o.score


def test_the_choice_is_recorded_and_the_warning_given(sample):
    res = sample.fuse(["bm25", "bm25_rm3"], "rrf", name="rrf_opt", optimize="AP", qrels="sample")
    o = res.optimization
    assert o.searched == "k" and [c["params"]["k"] for c in o.candidates] == list(range(10, 101, 10))
    f = json.loads(sample.sql("SELECT fusion FROM runs WHERE name = 'rrf_opt'").rows[0][0])
    assert f["params"] == {"k": o.best["params"]["k"]}
    assert f["optimized"]["metric"] == "AP" and f["optimized"]["qrels"] == "sample"
    assert f["optimized"]["grid_size"] == 10 and f["optimized"]["score"] == o.score
    assert f["optimized"]["qrels_sha256"] == sample.sql("SELECT sha256 FROM qrels_sets").rows[0][0]
    assert "overstates the gain" in o.warning() and "held-out" in o.warning()
    table = o.table()
    assert table.rows[0][3] == "chosen" and any("overstates" in n for n in table.notes)
    assert (
        sample.sql("SELECT recipe FROM runs WHERE name = 'rrf_opt'")
        .rows[0][0]
        .startswith("fused from bm25, bm25_rm3 by RRF (k = ")
    )


def test_equal_means_choose_the_last_point_as_ranx(store):
    """Two runs in the same order: every weighting ranks alike, so ranx's >= keeps the last."""
    store.ingest_qrels({"q": {"a": 1, "b": 0}}, name="qr")
    store.ingest_run({"q": {"a": 2.0, "b": 1.0}}, name="X")
    store.ingest_run({"q": {"a": 20.0, "b": 10.0}}, name="Y")
    res = store.fuse(["X", "Y"], "wsum", name="F", optimize="AP", qrels="qr")
    assert set(res.optimization.means) == {1.0}
    assert res.optimization.best == {"weights": (1.0, 0.0)}


def test_batches_give_the_same_choice(sample, monkeypatch):
    whole = sample.fuse(["bm25", "dense", "bm25_rm3"], "wsum", name="w1", optimize="nDCG@10", qrels="sample")
    monkeypatch.setattr(opt, "BATCH_ROWS", 1000)
    split = sample.fuse(["bm25", "dense", "bm25_rm3"], "wsum", name="w2", optimize="nDCG@10", qrels="sample")
    assert split.optimization.means == whole.optimization.means
    assert split.optimization.best == whole.optimization.best and len(whole.optimization.candidates) == 66


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"method": "wsum", "weights": "0.5,0.5"}, "leave --weights out"),
        ({"method": "rrf", "params": {"k": 60}}, "leave --param k"),
        ({"method": "sum"}, "nothing to choose"),
        ({"method": "wsum", "optimize": "P.5,10"}, "one metric"),
        ({"method": "wsum", "optimize": "ADM"}, "reads the stored run"),
        ({"method": "wsum", "step": 0.3}, "must divide 1"),
    ],
)
def test_optimize_errors(sample, kwargs, says):
    kw = {"optimize": "AP", "qrels": "sample", "name": "bad", **kwargs}
    with pytest.raises(FusionError, match=says):
        sample.fuse(["bm25", "dense"], kw.pop("method"), **kw)
    assert "bad" not in sample.run_names()


def tie_free(seed: int = 7, topics: int = 20, pool: int = 90, depth: int = 60):
    """Three runs with continuous scores (no ties: ranx and evalstore order ties differently) and
    graded qrels, as dicts."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, runs = {}, [{}, {}, {}]
    for t in range(topics):
        q = f"t{t:02d}"
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=pool)
        qrels[q] = {f"d{d}": int(g) for d, g in enumerate(grades) if rng.random() < 0.7}
        for r, run in enumerate(runs):
            quality = 0.5 + r
            scores = quality * grades + rng.normal(0, 2, size=pool)
            top = np.argsort(-scores)[:depth]
            run[q] = {f"d{d}": float(scores[d]) for d in top}
    return qrels, runs


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ranx") is None, reason="needs ranx (the test extra: pip install -e '.[test]')"
)
def test_ranx_optimize_fusion_chooses_the_same_weights():
    """ranx's optimize_fusion (wsum, min-max, ndcg@10: linear gains, trec_eval's nDCG@10) on three
    tie-free runs: the same grid order, the same mean for every weighting ranx tries, the same
    choice."""
    from ranx import Qrels, Run, optimize_fusion

    qrels_d, runs_d = tie_free()
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(qrels_d, name="q")
        for k, r in enumerate(runs_d):
            s.ingest_run(r, name=f"r{k}")
        o = s.fuse(["r0", "r1", "r2"], "wsum", name="f", optimize="nDCG@10", qrels="q").optimization
    runs = [Run(r) for r in runs_d]
    best, report = optimize_fusion(
        Qrels(qrels_d), runs, norm="min-max", method="wsum", metric="ndcg@10", return_optimization_report=True
    )
    ours = {tuple(c["weights"]): m for c, m in zip(o.candidates, o.means)}
    theirs = {_weights(config): value for config, value in zip(report.configs, report.results)}
    assert len(theirs) == len(ours) - o.ranx_drops == 62
    for config, value in theirs.items():
        assert ours[config] == pytest.approx(value, abs=1e-12), config
    assert tuple(best["weights"]) == o.best["weights"]


def _weights(config: str) -> tuple[float, ...]:
    """ranx's report key, str() of its weights: "(0.0, 0.1, 0.9)" or, with NumPy 2, "(np.float64(0.0), ...)"."""
    import re

    plain = re.sub(r"np\.float64\(([^)]*)\)", r"\1", config)
    return tuple(float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", plain))

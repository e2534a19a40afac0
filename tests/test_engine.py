"""Engine-level properties: contexts, pool rows, bulk evaluation."""
import pytest

from evalstore.subsample import create_subsamples

OTHERS = ["AP", "nDCG@10", "Bpref", "bpref_N", "NDPM", "Q-measure", "AP(judged_only=true)"]


def test_pool_rows_change_only_infap(sample_store):
    """Pool rows of a subsample (the parent's dropped docs as grade -1) are built only when infAP is
    asked for; no other metric may depend on whether they are there."""
    names = create_subsamples(sample_store, "sample", [0.3], trials=1, seed=7)
    without = sample_store.evaluate(names[0], None, OTHERS, save=False)
    with_inf = sample_store.evaluate(names[0], None, OTHERS + ["infAP"], save=False)
    no_pool = sample_store.evaluate(names[0], None, ["infAP"], pool=False, save=False)
    a = {(r, t, m): v for r, t, m, v in without.per_topic}
    b = {(r, t, m): v for r, t, m, v in with_inf.per_topic if m != "infAP"}
    assert a.keys() == b.keys()
    for k in a:
        assert b[k] == pytest.approx(a[k], abs=1e-12), k
    inf_pool = {(r, t): v for r, t, m, v in with_inf.per_topic if m == "infAP"}
    inf_nopool = {(r, t): v for r, t, m, v in no_pool.per_topic}
    assert any(abs(inf_pool[k] - inf_nopool[k]) > 1e-6 for k in inf_pool), "the pool must matter to infAP"

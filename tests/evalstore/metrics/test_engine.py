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


def test_ranked_list_builds_only_the_running_columns_that_metrics_name(sample_store):
    """cnt, jrank, cg, cg_ideal and gain_ideal cost a window aggregate or a join each: the engine
    builds those that the requested metrics' SQL blocks declare (-- needs:), and the values are
    those of the full list."""
    from evalstore.metrics import engine, ranked_list
    from evalstore.metrics.options import EvalOptions

    def needs(names):
        return set().union(*(i.spec.block.needs for i in engine.resolve_metrics(names)))

    s = sample_store
    opts = EvalOptions()
    ctx = ranked_list.Context()
    assert needs(["AP", "P@10", "nDCG@10"]) == {"cnt"}
    assert needs(["Q-measure"]) >= {"cnt", "cg", "cg_ideal"}
    runs = [s.run_id(r) for r in ("bm25", "rerank")]
    ranked_list.build(s.con, [s.qrels_id("sample")], runs, ctx, opts)
    full = s.con.execute(
        "SELECT qrels_id, run_id, topic, rank, cnt, cg, jrank, cg_ideal, gain_ideal FROM rl_judged ORDER BY ALL"
    ).fetchall()
    ranked_list.build(s.con, [s.qrels_id("sample")], runs, ctx, opts, columns={"cnt"})
    cols = [r[0] for r in s.con.execute("DESCRIBE rl_judged").fetchall()]
    assert "cnt" in cols and not {"cg", "jrank", "cg_ideal", "gain_ideal"} & set(cols)
    slim = s.con.execute("SELECT qrels_id, run_id, topic, rank, cnt FROM rl_judged ORDER BY ALL").fetchall()
    assert slim == [r[:5] for r in full] and len(slim) > 100
    ranked_list.drop(s.con)


def test_jrank_is_the_row_number_when_every_row_is_judged(sample_store):
    """Without grades below 0 (and without a subsample's pool rows) every judged-list row is
    judged: jrank is built as the row number, equal in value and type to the running count it
    replaces; a qrels set with an unjudged grade (-1) keeps the count."""
    from evalstore.metrics import ranked_list
    from evalstore.metrics.options import EvalOptions

    s, opts, ctx = sample_store, EvalOptions(), ranked_list.Context()
    qid, runs = s.qrels_id("sample"), [s.run_id(r) for r in ("bm25", "rerank")]
    assert ranked_list.every_judged(s.con, [qid], opts)

    def judged_list(every: bool):
        for stmt in ranked_list.render([qid], runs, ctx, opts, {"cnt", "jrank"}, _source(runs), every_judged=every):
            s.con.execute(stmt)
        rows = s.con.execute("SELECT qrels_id, run_id, topic, rank, cnt, jrank FROM rl_judged ORDER BY ALL").fetchall()
        return rows, dict(s.con.execute("SELECT column_name, column_type FROM (DESCRIBE rl_judged)").fetchall())

    (fast, fast_types), (counted, counted_types) = judged_list(True), judged_list(False)
    assert fast == counted and len(fast) > 100 and fast_types["jrank"] == counted_types["jrank"]
    names = create_subsamples(s, "sample", [0.3], trials=1, seed=7)
    assert ranked_list.every_judged(s.con, [s.qrels_id(names[0])], EvalOptions(pool=False))
    assert not ranked_list.every_judged(s.con, [s.qrels_id(names[0])], opts)  # the parent's pool rows: grade -1
    s.con.execute(
        "UPDATE qrels_data SET grade = -1 WHERE rowid = (SELECT min(rowid) FROM qrels_data WHERE qrels_id = ?)", [qid]
    )
    assert not ranked_list.every_judged(s.con, [qid], opts)
    ranked_list.drop(s.con)


def _source(run_ids):
    return f"SELECT run_id, topic, doc, rank, score FROM run_row_data WHERE run_id IN ({', '.join(map(str, run_ids))})"

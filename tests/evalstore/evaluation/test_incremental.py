"""Incremental evaluation (evalstore/evaluation/incremental.py): stored evaluations of the same run content,
qrels content, metric, options and engine version are reused; everything else is computed."""

from __future__ import annotations

import pytest
from support import SAMPLE, run_cli

import evalstore

RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def _computed_at(store):
    return dict(
        ((r, m), t)
        for r, m, t in store.sql(
            "SELECT run_meta.name, metric, computed_at FROM evaluations JOIN run_meta USING (run_id)"
        ).rows
    )


@pytest.fixture
def five(store):
    store.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    store.ingest_run(RUNS[:5], progress=False)
    return store


def test_evaluating_again_reuses_every_stored_score(five):
    first = five.evaluate("sample", None, ["AP", "nDCG@10", "P-plus"])
    assert (first.reused, first.computed) == (0, 15)
    before = _computed_at(five)
    again = five.evaluate("sample", None, ["map", "ndcg_cut_10", "P-plus"])  # other spellings, same metrics
    assert (again.reused, again.computed) == (15, 0)
    assert _computed_at(five) == before  # nothing rewritten
    # the values come back exactly as they were stored (same order, same names as requested)
    assert [(r, t, v) for r, t, _, v in again.per_topic] == [(r, t, v) for r, t, _, v in first.per_topic]
    assert [(r, v, n) for r, _, v, n in again.means] == [(r, v, n) for r, _, v, n in first.means]


def test_only_missing_cells_are_computed(five):
    five.evaluate("sample", None, ["AP"])
    five.ingest_run(RUNS[5], progress=False)
    res = five.evaluate("sample", None, ["AP", "RR"])
    # 5 stored AP evaluations reused; AP of the new run and RR of all six computed
    assert (res.reused, res.computed) == (5, 7)
    fresh = five.evaluate("sample", None, ["AP", "RR"], recompute=True)
    assert (fresh.reused, fresh.computed) == (0, 12)
    assert fresh.per_topic == res.per_topic


def test_a_changed_option_or_run_content_is_computed_again(five, tmp_path):
    five.evaluate("sample", None, ["P@10"])
    assert five.evaluate("sample", None, ["P@10"], complete=True).reused == 0  # another option
    assert five.evaluate("sample", None, ["P@10"], convention="ntcireval").reused == 0
    # the stored hash no longer matches the run's content: computed again, not reused
    five.con.execute("UPDATE evaluations SET run_sha256 = 'other' WHERE run_id = (SELECT min(run_id) FROM run_meta)")
    res = five.evaluate("sample", None, ["P@10"])
    assert (res.reused, res.computed) == (4, 1)
    # an older engine's scores are not reused
    five.con.execute("UPDATE evaluations SET engine_version = '0.0.1'")
    assert five.evaluate("sample", None, ["P@10"]).reused == 0


def test_reingesting_a_run_under_its_name_recomputes_it(five, tmp_path):
    five.evaluate("sample", None, ["P@5"])
    changed = tmp_path / "bm25.txt"
    lines = RUNS[0].read_text().splitlines()
    changed.write_text("\n".join(lines[1:]) + "\n")  # one document fewer
    five.ingest_run(changed, name=RUNS[0].stem, replace=True, progress=False)
    res = five.evaluate("sample", None, ["P@5"])
    assert (res.reused, res.computed) == (4, 1)


def test_eval_command_says_what_it_reused(tmp_path):
    db = str(tmp_path / "t.duckdb")
    with evalstore.open(db) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        s.ingest_run(RUNS, progress=False)
    r = run_cli("eval", "-m", "AP", "-m", "P_10", "--db", db)
    assert r.exit_code == 0 and "reused" not in r.output
    r = run_cli("eval", "-m", "AP", "-m", "P_10", "--db", db)
    assert r.exit_code == 0 and "reused 12 stored evaluation(s), computed 0" in r.output
    r = run_cli("eval", "-m", "AP", "-m", "P_10", "--recompute", "--db", db)
    assert r.exit_code == 0 and "reused" not in r.output


def test_a_reused_metric_beside_a_computed_one_counts_each_topic_once(sample_db, tmp_path):
    """Issue 30.7: AP(rel=2) stored for the parent, P@30 not, subsamples not: one call evaluates the
    parent and its subsamples; the parent's AP(rel=2) lies inside the computed rectangle and is not
    also reused (n_topics was 2 x 8 = 16 for the 8 topics, in the table and in -o files)."""
    from evalstore.subsample import create_subsamples, evaluate_subsamples

    with evalstore.open(sample_db) as s:
        s.evaluate("sample", None, ["AP(rel=2)"])
        create_subsamples(s, "sample", [0.5], min_nonrel=1)
        for _ in range(2):  # the first call computes the missing cells, the second reuses them all
            results = evaluate_subsamples(s, "sample", None, ["AP(rel=2)", "P@30"])
            for result in results.values():
                assert {n for _, _, _, n in result.means} == {8}
                assert len(result.per_topic) == 6 * 8 * 2
            assert results["sample"].reused + results["sample"].computed == 2 * 6 * 2
    out = tmp_path / "lb.csv"
    r = run_cli("eval", "--db", sample_db, "--subsamples", "all", "-m", "AP(rel=2)", "-m", "P@30", "-o", out)
    assert r.exit_code == 0, r.output
    rows = out.read_text().splitlines()
    assert rows[0].startswith("run,qrels,fraction,trial,n_topics") and all(",8," in row for row in rows[1:])


def test_reused_scores_are_read_beside_the_computed_ones_not_copied(five, monkeypatch):
    """The output table holds only the scores computed now; the reused ones are read from
    ``score_data`` by the result's query (issue 42: no copy of 500,000 scores on every eval)."""
    from evalstore.evaluation.context import EvaluationContext

    five.evaluate("sample", None, ["AP"])
    five.ingest_run(RUNS[5], progress=False)
    seen = []
    scores = EvaluationContext.scores

    def spy(ctx, qrels_id):
        query, params = scores(ctx, qrels_id)
        table = ctx._out
        seen.append((ctx.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0],
                     ctx.con.execute(f"SELECT count(*) FROM ({query})", params).fetchall()[0][0]))  # fmt: skip
        return query, params

    monkeypatch.setattr(EvaluationContext, "scores", spy)
    res = five.evaluate("sample", None, ["AP", "RR"])
    n_topics = five.sql("SELECT count(DISTINCT topic) FROM qrels").rows[0][0]
    assert (res.reused, res.computed) == (5, 7)
    assert seen == [(7 * n_topics, 12 * n_topics)]
    assert res.per_topic == five.evaluate("sample", None, ["AP", "RR"], recompute=True).per_topic
    everything = five.evaluate("sample", None, ["AP", "RR"])  # every score reused: nothing computed
    assert (everything.reused, everything.computed) == (12, 0) and seen[-1] == (0, 12 * n_topics)
    assert everything.per_topic == res.per_topic

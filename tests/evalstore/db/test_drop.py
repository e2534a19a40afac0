"""evalstore drop run / drop qrels: everything that depends on them goes, in one transaction."""

import pytest
from support import SAMPLE, run_cli

import evalstore
from evalstore.db import drop as dropping
from evalstore.errors import NotFoundError
from evalstore.meta import kendall
from evalstore.subsample import create_subsamples


def _counts(s):
    q = """SELECT (SELECT count(*) FROM run_meta), (SELECT count(*) FROM run_row_data),
                  (SELECT count(*) FROM qrels_meta), (SELECT count(*) FROM qrels_data),
                  (SELECT count(*) FROM score_data), (SELECT count(*) FROM evaluations),
                  (SELECT count(*) FROM subsample_meta), (SELECT count(*) FROM meta_runs),
                  (SELECT count(*) FROM meta_correlations)"""
    return dict(zip("runs run_rows qrels judgments scores evaluations subsamples analyses correlations".split(),
                    s.sql(q).rows[0]))  # fmt: skip


@pytest.fixture
def full(tmp_path):
    """The sample (6 runs x 50 docs x 8 topics, 480 judgments), scored, two subsamples, one analysis."""
    path = str(tmp_path / "d.duckdb")
    with evalstore.open(path) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
        s.evaluate("sample", None, ["AP", "P@10"])
        subs = create_subsamples(s, "sample", [0.5], trials=2, min_nonrel=1)
        s.evaluate(subs[0], None, ["AP"])
        kendall(s, "sample", ["AP", "P@10"])
    return path


def test_drop_run_removes_rows_scores_and_analyses(full):
    with evalstore.open(full) as s:
        before = _counts(s)
        assert before["runs"] == 6 and before["analyses"] == 1 and before["scores"] == 6 * 8 * 2 + 6 * 8
        plan = dropping.plan_drop(s, "run", ["bm25", "dense"])
        assert (plan.rows, plan.scores, plan.analyses) == (2 * 400, 2 * (8 * 2 + 8), [1])
        assert _counts(s) == before  # planning changes nothing
        s.drop_runs(["bm25", "dense"])
        after = _counts(s)
        assert s.run_names() == ["bm25_rm3", "hybrid", "random", "rerank"]
        assert after == {**before, "runs": 4, "run_rows": 4 * 400, "scores": 4 * 24, "evaluations": 4 * 3,
                         "analyses": 0, "correlations": 0}  # fmt: skip
        assert s.sql("SELECT count(*) FROM scores WHERE run IN ('bm25', 'dense')").rows == [(0,)]
        # the remaining runs evaluate as before
        assert s.evaluate("sample", ["rerank"], ["AP"]).mean("rerank", "AP") == pytest.approx(0.7013, abs=5e-5)


def test_drop_qrels_takes_its_subsamples(full):
    with evalstore.open(full) as s:
        plan = dropping.plan_drop(s, "qrels", ["sample"])
        assert len(plan.subsamples) == 2 and plan.rows == s.sql("SELECT count(*) FROM qrels_data").rows[0][0]
        s.drop_qrels(["sample"])
        c = _counts(s)
        assert (c["qrels"], c["judgments"], c["scores"], c["evaluations"], c["subsamples"], c["analyses"]) == (
            0, 0, 0, 0, 0, 0,
        )  # fmt: skip
        assert c["runs"] == 6 and c["run_rows"] == 2400  # the runs stay
        # the name can be used again
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        assert s.evaluate("sample", ["rerank"], ["AP"]).mean("rerank", "AP") == pytest.approx(0.7013, abs=5e-5)


def test_drop_a_subsample_keeps_the_parent(full):
    with evalstore.open(full) as s:
        sub = s.sql("SELECT name FROM subsamples ORDER BY name").rows[0][0]
        plan = s.drop_qrels([sub])
        assert plan.subsamples == [] and plan.analyses == []  # the analysis read 'sample' only
        c = _counts(s)
        assert (c["qrels"], c["subsamples"], c["analyses"]) == (2, 1, 1)
        assert c["scores"] == 6 * 8 * 2  # the subsample's AP scores went


def test_unknown_names_change_nothing(full):
    with evalstore.open(full) as s:
        before = _counts(s)
        with pytest.raises(NotFoundError, match=r"no run named 'bm52' in the store \(did you mean 'bm25'\?\)"):
            s.drop_runs(["rerank", "bm52"])
        assert _counts(s) == before


def test_cli_drop_asks_or_takes_yes(full):
    r = run_cli("drop", "run", "random", "--db", full, stdin="n\n")
    assert r.exit_code != 0  # the test runner's stdin is not a terminal: --yes is required
    assert "--yes" in r.output
    r = run_cli("drop", "run", "random", "--yes", "--db", full)
    assert r.exit_code == 0, r.output
    assert "dropped 1 run (random), 400 run rows, 24 stored per-topic scores" in r.output
    assert "1 meta analysis(es) that read it (ids 1)" in r.output
    with evalstore.open(full) as s:
        assert "random" not in s.run_names()
    r = run_cli("drop", "qrels", "sample", "-y", "--db", full)
    assert r.exit_code == 0, r.output
    assert "2 subsample(s) drawn from it (sample@bv0.5#0, sample@bv0.5#1)" in r.output


# --------------------------------------------------------------------------- issue 30.6: one drop path
def test_subsample_drop_cascades_like_drop_qrels(full):
    """`subsample drop` removes what `drop qrels` removes: the analyses that read the subsamples and
    their intervals go too, so a subsample made again under the same name (another seed) has no
    stale analysis beside it."""
    with evalstore.open(full) as s:
        subs = [r[0] for r in s.sql("SELECT name FROM subsamples ORDER BY name").rows]
        kendall(s, [subs[0], "sample"], ["AP"])
        s.evaluate(subs[0], None, ["AP"], ci="t")
        reading = dropping.analyses_reading(s, "qrels", [subs[0]])
        assert reading and s.sql(f"SELECT count(*) FROM interval_data i JOIN qrels_meta q USING (qrels_id) "
                                 f"WHERE q.name = '{subs[0]}'").rows[0][0] > 0  # fmt: skip
    r = run_cli("subsample", "drop", "--qrels", "sample", "--yes", "--db", full)
    assert r.exit_code == 0, r.output
    assert "2 qrels sets" in r.output and "meta analysis(es) that read it" in r.output
    with evalstore.open(full) as s:
        c = _counts(s)
        assert (c["qrels"], c["subsamples"]) == (1, 0)
        assert c["analyses"] == 1  # kendall on 'sample' alone stays; the one that read the subsample went
        assert s.sql("SELECT count(*) FROM meta_runs WHERE analysis_id IN ?", [reading]).rows == [(0,)]
        assert s.sql("SELECT count(*) FROM interval_data WHERE qrels_id NOT IN (SELECT qrels_id FROM qrels_meta)"
                     ).rows == [(0,)]  # fmt: skip
        again = create_subsamples(s, "sample", [0.5], trials=1, seed=9, min_nonrel=1)
        assert again[0] == subs[0] and dropping.analyses_reading(s, "qrels", again) == []


def test_subsample_replace_drops_what_read_the_old_one(full):
    with evalstore.open(full) as s:
        sub = s.sql("SELECT name FROM subsamples ORDER BY name").rows[0][0]
        kendall(s, [sub, "sample"], ["AP"])
        assert dropping.analyses_reading(s, "qrels", [sub])
        create_subsamples(s, "sample", [0.5], trials=2, seed=5, min_nonrel=1, replace=True)
        assert dropping.analyses_reading(s, "qrels", [sub]) == []
        assert s.sql("SELECT seed FROM subsamples WHERE name = ?", [sub]).rows == [(5,)]
        # the recreated subsample has no stale scores: evaluating it computes them again
        assert s.evaluate(sub, ["rerank"], ["AP"]).computed == 1

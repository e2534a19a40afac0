"""`evalstore agree` (evalstore.judges): two qrels sets compared on their labels and their
leaderboards. Every kappa equals scikit-learn's cohen_kappa_score and every alpha the krippendorff
package's (to 1e-9), overall and per topic, on the bundled sample's judge and on TREC DL 2019
against a perturbed copy of its qrels; tau-b and rho equal scipy's; the analysis is stored, read
back, dropped with its qrels sets, and printed by the CLI (tables, JSON)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from support import DATA_DIR, SAMPLE, need_shared, store_at_migration_1

import evalstore
from evalstore.errors import EvalstoreError, MetaError
from evalstore.meta.persist import load_table
from evalstore.stats.ranks import tau_ap, tau_ap_b

TOL = 1e-9
KEYS = {"n_common", "confusion", "kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_nominal"}
KEYS |= {"alpha_ordinal"}


def _read(path) -> dict[tuple[str, str], int]:
    out = {}
    with open(path) as f:
        for line in f:
            t, _, d, g = line.split()
            out[(t, d)] = int(g)
    return out


def _reference_values(ref: dict, cand: dict, rel: int, topic: str | None = None) -> dict[str, float]:
    """kappa by scikit-learn, alpha by the krippendorff package, on the label vectors of the pairs
    judged in both (of one topic, or all)."""
    import krippendorff  # the references: imported when a test runs, not at collection
    from sklearn.metrics import cohen_kappa_score

    keys = sorted(k for k in ref if k in cand and ref[k] >= 0 and cand[k] >= 0 and (topic is None or k[0] == topic))
    a = np.array([ref[k] for k in keys])
    b = np.array([cand[k] for k in keys])

    def kappa(x, y, w=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return float(cohen_kappa_score(x, y, weights=w))
            except ValueError:
                return math.nan

    def alpha(level):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return float(
                    krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
                )
            except ValueError:
                return math.nan

    return {
        "n_common": len(keys),
        "kappa": kappa(a, b),
        "kappa_linear": kappa(a, b, "linear"),
        "kappa_quadratic": kappa(a, b, "quadratic"),
        "kappa_binary": kappa((a >= rel).astype(int), (b >= rel).astype(int)),
        "alpha_nominal": alpha("nominal"),
        "alpha_ordinal": alpha("ordinal"),
    }


def _check_labels(row: dict, expected: dict) -> int:
    n = 0
    for k, v in expected.items():
        got = row[k]
        if isinstance(v, float) and math.isnan(v):
            assert got is None, (k, row.get("topic"))
        else:
            assert got == pytest.approx(v, abs=TOL), (k, row.get("topic"), got, v)
        n += 1
    return n


@pytest.fixture
def judged(sample_store):
    sample_store.ingest_qrels(SAMPLE / "qrels.judge.txt", name="judge", progress=False)
    return sample_store


def test_sample_labels_equal_sklearn_and_krippendorff_overall_and_per_topic(judged):
    a = judged.agree("sample", "judge", [], rel=2)
    ref, cand = _read(SAMPLE / "qrels.txt"), _read(SAMPLE / "qrels.judge.txt")
    checked = _check_labels(a.labels.overall, _reference_values(ref, cand, 2))
    for row in a.labels.topics:
        checked += _check_labels(row, _reference_values(ref, cand, 2, row["topic"]))
    assert checked == 9 * 7
    assert a.labels.overall["n_ref_only"] == sum(1 for k in ref if k not in cand)
    assert a.labels.overall["n_cand_only"] == sum(1 for k in cand if k not in ref) == 40
    assert a.labels.confusion.sum() == a.labels.overall["n_common"]
    assert a.ranking == []  # no metric asked for


def test_ranking_agreement_equals_scipy_and_the_stats(judged):
    from scipy.stats import kendalltau, spearmanr

    a = judged.agree("sample", "judge", ["nDCG@10", "AP(rel=2)"], rel=2)
    assert [r.metric for r in a.ranking] == ["nDCG@10", "AP(rel=2)"]
    for ra in a.ranking:
        x = np.array([r["mean_ref"] for r in ra.runs])
        y = np.array([r["mean_cand"] for r in ra.runs])
        s = ra.summary
        assert s["tau_b"] == pytest.approx(kendalltau(x, y).statistic, abs=TOL)
        assert s["spearman"] == pytest.approx(spearmanr(x, y).statistic, abs=TOL)
        assert s["tau_ap"] == pytest.approx(tau_ap(x, y), abs=TOL)
        assert s["tau_ap_sym"] == pytest.approx(tau_ap_b(x, y), abs=TOL)
        assert s["max_rank_change"] == max(abs(r["rank_ref"] - r["rank_cand"]) for r in ra.runs)
        assert s["n_flips"] == sum((r["p_ref"] < 0.05) != (r["p_cand"] < 0.05) for r in ra.runs[1:])
        assert ra.runs[0]["run"] == s["best_ref"] and ra.runs[0]["p_ref"] is None
        # the means are the leaderboard's
        query = "SELECT run, mean FROM leaderboard WHERE qrels = 'judge' AND metric = ?"
        board = dict(judged.sql(query, [_stored(judged, ra.metric)]).rows)
        assert {r["run"]: r["mean_cand"] for r in ra.runs} == pytest.approx(board, abs=1e-12)


def _stored(store, metric: str) -> str:
    from evalstore.meta.matrix import canonical_metric

    return canonical_metric(store, "judge", metric)


def test_stored_as_an_analysis_read_back_and_dropped_with_its_qrels(judged):
    a = judged.agree("sample", "judge", ["AP"], rel=2)
    aid = a.analysis_id
    assert judged.sql("SELECT kind FROM meta_runs WHERE analysis_id = ?", [aid]).rows == [("agree",)]
    labels = load_table(judged, "meta_agree_labels", aid)
    assert len(labels) == 1 + 8 and sum(r["topic"] is None for r in labels) == 1
    cells = load_table(judged, "meta_agree_confusion", aid)
    assert sum(c["n"] for c in cells if c["topic"] is None) == a.labels.overall["n_common"]
    assert sum(c["n"] for c in cells if c["topic"] is not None) == a.labels.overall["n_common"]
    [ranking] = load_table(judged, "meta_agree_ranking", aid)
    assert ranking["metric"] == "AP" and ranking["n_runs"] == 6
    assert len(load_table(judged, "meta_agree_runs", aid)) == 6
    judged.drop_qrels("judge")
    assert judged.sql("SELECT count(*) FROM meta_runs WHERE analysis_id = ?", [aid]).rows == [(0,)]
    assert judged.sql("SELECT count(*) FROM meta_agree_labels").rows == [(0,)]


def test_json_document_has_the_keys_of_the_issue(judged):
    doc = judged.agree("sample", "judge", ["nDCG@10", "AP"], rel=2, save=False).to_dict()
    assert KEYS <= set(doc["labels"])
    assert set(doc["ranking"]) == {"nDCG@10", "AP"}
    for entry in doc["ranking"].values():
        assert {"n_runs", "tau_b", "tau_ap", "spearman"} <= set(entry)
        assert {"max_rank_change", "max_rank_change_runs", "flips", "runs"} <= set(entry)
    assert len(doc["labels"]["per_topic"]) == 8
    assert doc["labels"]["confusion"][0][0] == 234 and doc["labels"]["grades"] == [0, 1, 2, 3]
    json.dumps(doc)  # plain JSON


def test_errors(judged):
    with pytest.raises(EvalstoreError, match="two different"):
        judged.agree("sample", "sample")
    with pytest.raises(EvalstoreError, match="no-such"):
        judged.agree("sample", "no-such")
    with pytest.raises(EvalstoreError, match="--rel"):
        judged.agree("sample", "judge", rel=0)
    with pytest.raises(EvalstoreError, match="unknown test"):
        judged.agree("sample", "judge", test="z")


def test_the_randomisation_test_repeats_with_its_seed(judged):
    a = judged.agree("sample", "judge", ["AP"], test="randomisation", trials=2000, seed=3, save=False)
    b = judged.agree("sample", "judge", ["AP"], test="randomisation", trials=2000, seed=3, save=False)
    assert [r["p_cand"] for r in a.ranking[0].runs] == [r["p_cand"] for r in b.ranking[0].runs]


def test_labels_only_without_runs(store):
    store.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    store.ingest_qrels(SAMPLE / "qrels.judge.txt", name="judge", progress=False)
    a = store.agree("sample", "judge")
    assert a.ranking == [] and "no runs" in " ".join(a.notes)


def test_cli(sample_db, cli):
    code, _, err = cli("ingest", "qrels", SAMPLE / "qrels.judge.txt", "--name", "judge", "--db", sample_db)
    assert code == 0, err
    code, out, err = cli("agree", "--db", sample_db, "-q", "sample", "--with", "judge", "-m", "AP", "--rel", "2")
    assert code == 0, err
    assert "kappa_quadratic" in out and "confusion matrix" in out and "tau_ap" in out
    assert "stored as analysis" in err and "Yilmaz" in out  # the legend under the tables on a pipe
    code, out, err = cli(
        "agree", "--db", sample_db, "-q", "sample", "-w", "judge", "-m", "AP", "-f", "json", "--no-save"
    )
    doc = json.loads(out)
    assert code == 0 and KEYS <= set(doc["labels"]) and "AP" in doc["ranking"]
    code, out, _ = cli(
        "agree", "--db", sample_db, "-q", "sample", "-w", "judge", "--per-topic", "-f", "csv", "--no-save"
    )
    assert code == 0 and out.splitlines()[0].startswith("topic,n_common,n_ref_only,n_cand_only,agreement,kappa")
    assert len(out.splitlines()) == 9
    code, out, _ = cli("agree", "--db", sample_db, "-q", "sample", "-w", "judge", "-m", "AP", "--per-run", "--no-save")
    assert code == 0 and "rank_cand" in out
    code, _, err = cli("agree", "--db", sample_db, "-q", "sample", "-w", "nope")
    assert code != 0 and "nope" in err


def test_an_old_store_upgrades_with_the_new_tables(tmp_path):
    path = tmp_path / "old.duckdb"
    store_at_migration_1(path)
    with evalstore.open(path) as s:
        tables = {r[0] for r in s.sql("SELECT table_name FROM information_schema.tables").rows}
        assert {"meta_agree_labels", "meta_agree_ranking", "rank_interval_data", "leaderboard_means"} <= tables
        assert s.sql("SELECT count(*) FROM leaderboard").rows == [(0,)]


# --------------------------------------------------------------------------- TREC DL 2019
def perturbed(qrels: dict, seed: int = 33) -> dict:
    """A perturbed copy of a qrels set: about 20 % of the grades moved one step (clipped to 0..3),
    5 % of the judgments dropped, and 300 unjudged (topic, doc) pairs added as grade 0 or 1."""
    rng = np.random.default_rng(seed)
    out = {}
    for key in sorted(qrels):
        u = rng.random()
        if u < 0.05:
            continue
        g = qrels[key]
        if u < 0.25:
            g = int(np.clip(g + (1 if rng.random() < 0.5 else -1), 0, 3))
        out[key] = g
    topics = sorted({t for t, _ in qrels})
    for i in range(300):
        out[(topics[i % len(topics)], f"extra-{i}")] = int(rng.random() < 0.3)
    return out


def _as_nested(qrels: dict) -> dict:
    nested: dict = {}
    for (t, d), g in qrels.items():
        nested.setdefault(t, {})[d] = g
    return nested


@pytest.mark.shared
@pytest.mark.slow
def test_dl2019_against_a_perturbed_copy(tmp_path):
    from scipy.stats import kendalltau, spearmanr

    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    ref = _read(d / "qrels.txt")
    cand = perturbed(ref)
    with evalstore.open(tmp_path / "dl.duckdb") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_qrels(_as_nested(cand), name="dl19-perturbed", progress=False)
        s.ingest_run(sorted((d / "runs").glob("*.gz"))[:12], progress=False)
        a = s.agree("dl19", "dl19-perturbed", ["nDCG@10", "AP(rel=2)"], rel=2, progress=False)
    checked = _check_labels(a.labels.overall, _reference_values(ref, cand, 2))
    for row in a.labels.topics:
        checked += _check_labels(row, _reference_values(ref, cand, 2, row["topic"]))
    assert len(a.labels.topics) == 43 and checked == 44 * 7
    assert a.labels.overall["n_cand_only"] == 300
    assert a.labels.overall["n_ref_only"] == sum(1 for k in ref if k not in cand)
    for ra in a.ranking:
        x = np.array([r["mean_ref"] for r in ra.runs])
        y = np.array([r["mean_cand"] for r in ra.runs])
        assert ra.summary["n_runs"] == 12 and ra.summary["n_topics"] == 43
        assert ra.summary["tau_b"] == pytest.approx(kendalltau(x, y).statistic, abs=TOL)
        assert ra.summary["spearman"] == pytest.approx(spearmanr(x, y).statistic, abs=TOL)


def test_one_run_is_refused_before_any_score_is_stored(judged):
    """Issue 39.10: `agree ... -r bm25` exited 1 after storing 8 scores."""
    n = judged.sql("SELECT count(*) FROM evaluations").rows[0][0]
    with pytest.raises(MetaError, match="needs at least 2 runs, got 1"):
        judged.agree("sample", "judge", ["AP"], runs=["bm25"])
    with pytest.raises(MetaError, match="needs at least 2 runs, got 1"):
        judged.kendall("sample", ["AP", "nDCG@10"], runs=["bm25", "bm25"])
    assert judged.sql("SELECT count(*) FROM evaluations").rows[0][0] == n


# ------------------------------------------------------------------ nugget assignments, support labels
def _assignments(store, qrels: str) -> dict[tuple[str, str, str], int]:
    """{(topic, run, nugget text): grade} of an assignment set, read from the documented view."""
    rows = store.sql("SELECT topic, run, text, grade FROM nugget_assignments WHERE qrels = ?", [qrels]).rows
    return {(t, r, x): g for t, r, x, g in rows}


def test_two_assignment_sets_agree_as_scikit_learn_krippendorff_and_scipy_say(rag_store):
    """The RAG sample's automatic assignments against the manual ones: every kappa is scikit-learn's,
    every alpha the krippendorff package's (overall and per topic, at rel 1 and 2), and each
    metric's tau-b and rho scipy's on the two leaderboards."""
    from scipy import stats

    ref, cand = _assignments(rag_store, "manual"), _assignments(rag_store, "auto")
    checked = 0
    for rel in (1, 2):
        a = rag_store.agree("manual", "auto", ["strict_vital", "vital", "all"], rel=rel, save=False)
        assert a.labels.grades == [0, 1, 2] and a.labels.overall["n_common"] == len(ref) == len(cand)
        checked += _check_labels(a.labels.overall, _reference_values(ref, cand, rel))
        for row in a.labels.topics:
            checked += _check_labels(row, _reference_values(ref, cand, rel, row["topic"]))
        for ra in a.ranking:
            query = "SELECT run, mean FROM leaderboard WHERE qrels = ? AND metric = ? ORDER BY run"
            x = dict(rag_store.sql(query, ["manual", ra.metric]).rows)
            y = dict(rag_store.sql(query, ["auto", ra.metric]).rows)
            runs = sorted(x)
            tau = stats.kendalltau([x[r] for r in runs], [y[r] for r in runs]).statistic
            rho = stats.spearmanr([x[r] for r in runs], [y[r] for r in runs]).statistic
            assert ra.summary["tau_b"] == pytest.approx(tau, abs=TOL) and ra.summary["n_runs"] == 6
            assert ra.summary["spearman"] == pytest.approx(rho, abs=TOL)
            checked += 2
    assert checked == 2 * 9 * 7 + 2 * 3 * 2  # 2 rels x (all topics + 8 topics) x 7 values, and tau_b, rho


def test_the_defaults_and_the_json_of_assignment_sets(rag_store):
    a = rag_store.agree("manual", "auto", save=False)
    assert [r.metric for r in a.ranking] == ["strict_vital", "strict_all", "vital", "all"]
    doc = a.to_dict()
    assert KEYS <= set(doc["labels"]) and doc["labels"]["grades"] == [0, 1, 2]
    assert set(doc["ranking"]) == {"strict_vital", "strict_all", "vital", "all"}
    s = rag_store.agree("support.manual", "support.auto", save=False)
    assert [r.metric for r in s.ranking] == ["support_precision", "support_recall"]
    n = rag_store.sql("SELECT count(*) FROM support_labels WHERE qrels = 'support.manual'").rows[0][0]
    assert s.labels.overall["n_common"] == n


def test_sets_of_different_kinds_are_not_compared(rag_store):
    with pytest.raises(EvalstoreError, match="holds nugget assignments and 'support.auto' citation support labels"):
        rag_store.agree("manual", "support.auto")
    with pytest.raises(EvalstoreError, match="relevance judgments"):
        rag_store.agree("qrels", "auto")

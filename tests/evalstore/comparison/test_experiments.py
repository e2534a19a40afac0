"""Issue 32.8 (API): pt.Experiment-style one-call comparison (evalstore.experiment, Store.experiment):
several systems, one or several baselines, a correction, per-query output, on a store or on
DataFrames/dicts, with PyTerrier's column names; the same tables `compare` prints. PyTerrier's
averages are scipy.stats.ttest_rel / wilcoxon p-values and statsmodels' multipletests
corrections of the per-query scores: checked against those here."""

from __future__ import annotations

import numpy as np
import pytest
from support import SAMPLE

import evalstore
from evalstore.errors import ArgumentError

RUN_FILES = sorted((SAMPLE / "runs").glob("*.txt"))


@pytest.fixture(scope="module")
def frames():
    """The sample as PyTerrier DataFrames: qrels (qid, docno, label) and {name: results (qid, docno, score, rank)}."""
    import pandas as pd

    qrels = pd.read_csv(SAMPLE / "qrels.txt", sep=" ", names=["qid", "iter", "docno", "label"], dtype=str)
    qrels["label"] = qrels["label"].astype(int)
    runs = {}
    for path in RUN_FILES:
        df = pd.read_csv(path, sep=" ", names=["qid", "Q0", "docno", "rank", "score", "name"], dtype={"qid": str})
        runs[df["name"][0]] = df[["qid", "docno", "score", "rank"]]
    return qrels, runs


def test_averages_and_per_query_in_pyterrier_columns(frames):
    from scipy import stats
    from statsmodels.stats.multitest import multipletests  # the reference: imported when the test runs

    qrels, runs = frames
    ex = evalstore.experiment(runs, qrels, ["AP", "nDCG@10"], baseline="bm25", correction="holm")
    df = ex.to_df()
    assert list(df.columns) == [
        "name", "AP", "nDCG@10",
        "AP +", "AP -", "AP p-value", "AP reject", "AP p-value corrected",
        "nDCG@10 +", "nDCG@10 -", "nDCG@10 p-value", "nDCG@10 reject", "nDCG@10 p-value corrected",
    ]  # fmt: skip
    assert list(df["name"]) == list(runs)  # the systems in the order given
    pq = ex.to_df(perquery=True)
    assert list(pq.columns) == ["name", "qid", "measure", "value"] and len(pq) == 6 * 8 * 2
    # the means are the per-query means; the p-values scipy's paired t-test of the per-query scores
    # (what pt.Experiment calls), the correction statsmodels' (what it applies)
    for measure in ("AP", "nDCG@10"):
        wide = pq[pq.measure == measure].pivot(index="qid", columns="name", values="value")
        base = wide["bm25"].to_numpy()
        others = [n for n in runs if n != "bm25"]
        p = [stats.ttest_rel(wide[n].to_numpy(), base).pvalue for n in others]
        reject, corrected, _, _ = multipletests(p, alpha=0.05, method="holm")
        got = df.set_index("name").loc[others]
        assert np.allclose(got[f"{measure} p-value"], p, rtol=1e-12, atol=0)
        assert np.allclose(got[f"{measure} p-value corrected"], corrected, rtol=1e-12, atol=0)
        assert list(got[f"{measure} reject"]) == list(reject)
        assert list(got[f"{measure} +"]) == [int((wide[n] > wide["bm25"]).sum()) for n in others]
        assert list(got[f"{measure} -"]) == [int((wide[n] < wide["bm25"]).sum()) for n in others]
        assert np.allclose(df.set_index("name")[measure], wide.mean().loc[list(runs)], rtol=1e-15)
    assert df.set_index("name").loc["bm25", ["AP +", "AP p-value"]].isna().all()  # the baseline's own row


def test_the_same_numbers_on_a_store_and_on_dataframes_and_compare_prints_the_same(frames, sample_db, cli):
    import pandas as pd

    qrels, runs = frames
    options = {"baseline": "bm25", "correction": "holm", "effects": True}
    ex = evalstore.experiment(runs, qrels, ["AP", "P(rel=2)@10"], **options)
    with evalstore.open(sample_db) as s:
        on_store = s.experiment(["AP", "P(rel=2)@10"], **options)  # qrels: the store's only set
        assert s.sql("SELECT count(*) FROM meta_runs").rows[0][0] == 0  # comparisons not stored unless save=True
    pd.testing.assert_frame_equal(ex.to_df(), on_store.to_df())
    pd.testing.assert_frame_equal(ex.to_df(perquery=True), on_store.to_df(perquery=True))
    code, out, err = cli("compare", "-b", "bm25", "-m", "AP", "-m", "P(rel=2)@10", "--adjust", "holm", "--effects",
                         "-f", "markdown", "--no-save", "--db", sample_db)  # fmt: skip
    assert code == 0, err
    assert on_store.to_markdown() == out and ex.to_markdown().replace("qrels", "sample") == out.replace(
        "qrels", "sample"
    )
    code, out, _ = cli("compare", "-b", "bm25", "-m", "AP", "-m", "P(rel=2)@10", "--adjust", "holm", "--effects",
                       "-f", "csv", "--no-save", "--db", sample_db)  # fmt: skip
    data = pd.read_csv(pd.io.common.StringIO(out))
    pairs = on_store.pairs_df()
    assert list(pairs.columns) == list(data.columns) and np.allclose(pairs["ci_t_lo"], data["ci_t_lo"], rtol=1e-15)
    df = ex.to_df().set_index("name")
    assert np.allclose(df.loc[data[data.metric == "AP"].run, "AP diff lo"], data[data.metric == "AP"].ci_t_lo)
    assert "AP d_z" in df.columns


def test_several_baselines_positions_and_lists_with_names(frames):
    from scipy import stats

    qrels, runs = frames
    ex = evalstore.experiment(list(runs.values()), qrels, "AP", names=list(runs), baseline=[0, "dense"],
                              test="wilcoxon")  # fmt: skip
    df = ex.to_df()
    assert list(df.columns[:3]) == ["baseline", "name", "AP"] and len(df) == 12
    assert list(dict.fromkeys(df["baseline"])) == ["bm25", "dense"]
    assert set(ex.comparisons) == {"bm25", "dense"}
    wide = ex.to_df(perquery=True).pivot(index="qid", columns="name", values="value")
    row = df[(df.baseline == "dense") & (df.name == "rerank")].iloc[0]
    assert row["AP p-value"] == pytest.approx(stats.wilcoxon(wide["rerank"], wide["dense"]).pvalue, rel=1e-12)
    assert "AP p-value corrected" not in df.columns  # no correction: PyTerrier adds no such column either
    assert ex.to_latex().count("\\begin{tabular}") == 2  # one paper table per baseline


def test_no_baseline_means_only_and_clear_errors(frames, tmp_path):
    qrels, runs = frames
    ex = evalstore.experiment(runs, qrels, ["AP", "GM_AP"])
    df = ex.to_df()
    assert list(df.columns) == ["name", "AP", "GM_AP"]
    ref = evalstore.evaluate(qrels, runs, ["AP", "GM_AP"])
    assert df.set_index("name")["GM_AP"].to_dict() == {r: ref.mean(r, "GM_AP") for r in runs}  # geometric means
    with pytest.raises(ArgumentError, match="no baseline was given"):
        ex.to_latex()
    with pytest.raises(ArgumentError, match="names= of the same length"):
        evalstore.experiment(list(runs.values()), qrels, "AP")
    with pytest.raises(ArgumentError, match="the baseline 'bm52' is not one of the systems"):
        evalstore.experiment(runs, qrels, "AP", baseline="bm52")
    with pytest.raises(evalstore.EvalstoreError, match="unknown p-value adjustment 'hs'"):
        evalstore.experiment(runs, qrels, "AP", baseline="bm25", correction="hs")
    # statsmodels' spelling of Benjamini-Hochberg, as PyTerrier users write it
    bh = evalstore.experiment(runs, qrels, "AP", baseline="bm25", correction="fdr_bh").to_df()
    assert "AP p-value corrected" in bh.columns
    # run files, named by their tags; a system missing a query: the missing-topic policy decides
    files = evalstore.experiment(RUN_FILES[:3], SAMPLE / "qrels.txt", "AP", baseline="bm25")
    assert list(files.to_df()["name"]) == ["bm25", "bm25_rm3", "dense"]
    partial = {**runs, "partial": runs["dense"][runs["dense"].qid != "S01"]}
    with pytest.raises(evalstore.EvalstoreError, match="missing='zero'"):
        evalstore.experiment(partial, qrels, "AP", baseline="bm25")
    dropped = evalstore.experiment(partial, qrels, "AP", baseline="bm25", missing="drop_topics")
    assert set(dropped.to_df(perquery=True)["qid"]) == {f"S0{i}" for i in range(2, 9)}


def test_a_store_experiment_with_save_stores_each_comparison(sample_db):
    with evalstore.open(sample_db) as s:
        ex = s.experiment("AP", ["bm25", "dense", "rerank"], baseline=["bm25", "dense"], save=True)
        kinds = s.sql("SELECT kind FROM meta_runs ORDER BY analysis_id").rows
        with pytest.raises(evalstore.EvalstoreError, match="did you mean 'bm25'"):
            s.experiment("AP", baseline="bm52")
    assert kinds == [("compare",), ("compare",)]
    assert list(ex.to_df()["name"]) * 1 == ["bm25", "dense", "rerank"] * 2

"""Real data: evalstore's pools and RBP residuals equal trectools 0.0.50's on the 37 TREC DL 2019
passage runs (the issue's reference checks).

* Pools: ``TrecPoolMaker.make_pool`` with ``topX`` (depth), ``rbp`` (sum and max) and ``rrf``,
  compared topic by topic with ``evalstore pool`` at K = 10. Ties: trectools
  sorts a run by score descending and docno *ascending* (``TrecRun.read_run``) and breaks ties in a
  pooled weight by pandas' unstable sort; evalstore orders tied scores by docno descending (trec_eval)
  and tied weights by docno descending. A topic where a tie decides the K-th place (a run with equal
  scores at ranks K and K+1 for topX; equal pooled weights, within 1e-12, at places K and K+1 for
  rbp and rrf) is not compared for equality; for such a topic both pools must still hold every
  document above the tie. trectools' rbp and rrf read the rank column of a run: they are given the
  runs with evalstore's evaluation ranks (the files' rank columns differ from the score order on
  374,902 of the 1,419,989 lines and count from 0 in TU-Vienna's six runs), and, to check
  ``--ranks submitted``, the files themselves for the 31 runs whose rank column counts from 1.
* RBP: ``TrecEval.get_rbp(p=0.8)`` per topic: graded RBP (``binary_topical_relevance=False``)
  equals evalstore's ``RBP``; the residual it returns (binary) equals ``RBP_resid``; binary RBP equals
  ``RBP(rel=1)`` wherever no tie group of scores holds a relevant document (trectools averages the
  weights of tied documents, cwl_eval's RBP(rel) does not). Topics where the run retrieved no
  relevant document have no per-topic residual in trectools (pandas' index alignment gives NaN):
  their runs are compared on the mean residual ``get_rbp`` returns.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from support import DATA_DIR, need_shared

import evalstore

pytestmark = [pytest.mark.slow, pytest.mark.shared]
DL19 = DATA_DIR / "trec-dl-2019-passage"
REL_TOL = 1e-12


@pytest.fixture(scope="module")
def dl19(tmp_path_factory):
    need_shared(DL19)
    warnings.filterwarnings("ignore", category=FutureWarning)
    import pandas as pd
    from trectools import TrecQrel, TrecRun

    store = evalstore.open(tmp_path_factory.mktemp("trectools") / "dl19.duckdb")
    store.ingest_qrels(DL19 / "qrels.txt", name="dl19")
    store.ingest_run(sorted(str(p) for p in (DL19 / "runs").glob("*.gz")), progress=False)
    rows = store.sql(
        "SELECT run, topic, doc, rank, score, submitted_rank FROM run_rows ORDER BY run, topic, rank"
    ).df()  # fmt: skip
    evaluation = {}
    for name, g in rows.groupby("run"):
        df = pd.DataFrame({"query": g.topic.astype(str), "q0": "Q0", "docid": g.doc.astype(str),
                           "rank": g["rank"].astype(int), "score": g.score, "system": name})  # fmt: skip
        run = TrecRun()
        run.load_run_from_dataframe(df.sort_values(["query", "score", "docid"], ascending=[True, False, True]))
        evaluation[name] = run
    files = {p.name.removesuffix(".run.gz"): TrecRun(str(p)) for p in sorted((DL19 / "runs").glob("*.gz"))}
    yield {
        "store": store,
        "rows": rows,
        "evaluation": evaluation,
        "files": files,
        "qrels": TrecQrel(str(DL19 / "qrels.txt")),
    }
    store.close()


def ours(store, pool: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for t, d in store.sql("SELECT topic, doc FROM pools WHERE pool = ?", [pool]).rows:
        out.setdefault(t, set()).add(d)
    return out


def theirs(pool) -> dict[str, set[str]]:
    return {str(t): set(docs) for t, docs in pool.pool.items()}


def weights(frames, how: str, p: float = 0.8, k: float = 60):
    """Every (topic, doc)'s pooled weight from the rank columns trectools reads, as a Series."""
    import pandas as pd

    big = pd.concat([f[["query", "docid", "rank"]] for f in frames])
    w = (1 - p) * p ** (big["rank"] - 1) if how != "rrf" else 1.0 / (k + big["rank"])
    grouped = w.groupby([big["query"], big["docid"]])
    return grouped.max() if how == "max" else grouped.sum()


def tied_at(values, depth: int) -> dict[str, tuple[float, float]]:
    """Per topic: (weight at place K, weight at place K+1), the topics where they tie."""
    out = {}
    for topic, v in values.groupby(level=0):
        s = np.sort(v.to_numpy())[::-1]
        if len(s) > depth and math.isclose(s[depth - 1], s[depth], rel_tol=REL_TOL):
            out[str(topic)] = (s[depth - 1], s[depth])
    return out


def compare(mine, ref, tied, above) -> tuple[int, int, int]:
    """Equal pools on the topics no tie decides; on the others, both hold what is above the tie.
    Returns the topics compared, the topics a tie decides, and how many of those are equal anyway."""
    assert set(mine) == set(ref)
    compared = equal_anyway = 0
    for topic in ref:
        if topic in tied:
            assert above[topic] <= mine[topic] and above[topic] <= ref[topic], topic
            equal_anyway += mine[topic] == ref[topic]
            continue
        assert mine[topic] == ref[topic], topic
        compared += 1
    return compared, len(tied), equal_anyway


def test_depth_pools_equal_trectools_top_x(dl19):
    from trectools import TrecPoolMaker

    store, depth = dl19["store"], 10
    store.pool("d10", depth=depth, replace=True)
    ref = theirs(TrecPoolMaker().make_pool(list(dl19["files"].values()), strategy="topX", topX=depth))
    rows = dl19["rows"]
    # a tie decides when some run has equal scores at ranks K and K+1 (either order of docnos)
    at = rows[rows["rank"].isin([depth, depth + 1])].pivot_table(index=["run", "topic"], columns="rank", values="score")
    tied = {str(t) for (_, t), r in at.iterrows() if r[depth] == r[depth + 1]}
    above = {str(t): set(g.doc) for t, g in rows[rows["rank"] < depth].groupby("topic")}
    for (run, t), r in at.iterrows():  # the documents strictly above the tie of each tied run
        if r[depth] == r[depth + 1]:
            mine = rows[(rows.run == run) & (rows.topic == t)]
            above[str(t)] = set(rows[(rows.topic == t) & (rows["rank"] <= depth)].doc) - set(
                mine[mine.score == r[depth]].doc
            )
    # 35 topics compared; in 8 a run has equal scores at ranks 10 and 11, and 5 of those pools agree anyway
    assert compare(ours(store, "d10"), ref, tied, above) == (35, 8, 5)


@pytest.mark.parametrize(
    ("strategy", "how", "depth", "expected"),
    [
        ("rbp", "sum", 10, (43, 0, 0)),
        ("rbp", "max", 10, None),  # many documents share a run's rank-1 weight: ties decide most topics
        ("rrf", "rrf", 10, (43, 0, 0)),
    ],
)
def test_rbp_and_rrf_pools_equal_trectools(dl19, strategy, how, depth, expected):
    from trectools import TrecPoolMaker

    store, runs = dl19["store"], list(dl19["evaluation"].values())
    kwargs = {"rbp_agg": how} if strategy == "rbp" else {}
    store.pool("p", strategy=strategy, depth=depth, replace=True, **kwargs)
    maker = TrecPoolMaker()
    if strategy == "rbp":
        ref = theirs(maker.make_pool(runs, strategy="rbp", topX=depth, rbp_strategy=how, rbp_p=0.8))
    else:
        ref = theirs(maker.make_pool(runs, strategy="rrf", topX=depth, rrf_den=60))
    values = weights([r.run_data for r in runs], how)
    tied = tied_at(values, depth)
    above = {
        t: set(v.index.get_level_values(1)[v.to_numpy() > tied[t][0]]) for t, v in values.groupby(level=0) if t in tied
    }
    found = compare(ours(store, "p"), ref, tied, {str(t): d for t, d in above.items()})
    assert found == expected if expected else (found[0], found[1]) == (8, 35)
    # the stored weight of every pooled document is the one trectools ranks by
    stored = store.sql("SELECT topic, doc, value FROM pool_data JOIN pool_meta USING (pool_id) WHERE name = 'p'").rows
    assert all(math.isclose(v, values[(t, d)], rel_tol=REL_TOL) for t, d, v in stored)


def test_rbp_pools_of_the_ranks_as_written_equal_trectools_on_the_files(dl19):
    from trectools import TrecPoolMaker

    store, rows = dl19["store"], dl19["rows"]
    counting = sorted(set(rows.run) - set(rows[rows.submitted_rank < 1].run))
    assert len(counting) == 31  # TU-Vienna's six runs count from 0
    store.pool("written", counting, strategy="rbp", depth=10, ranks="submitted", replace=True)
    files = [dl19["files"][r] for r in counting]
    ref = theirs(TrecPoolMaker().make_pool(files, strategy="rbp", topX=10, rbp_strategy="sum", rbp_p=0.8))
    values = weights([f.run_data for f in files], "sum")
    tied = tied_at(values, 10)
    above = {str(t): set(v.index.get_level_values(1)[v.to_numpy() > tied[str(t)][0]])
             for t, v in values.groupby(level=0) if str(t) in tied}  # fmt: skip
    assert compare(ours(store, "written"), ref, tied, above) == (43, 0, 0)


def test_rbp_and_its_residual_equal_get_rbp(dl19):
    from trectools import TrecEval

    store, rows = dl19["store"], dl19["rows"]
    res = store.evaluate("dl19", None, ["RBP", "RBP_resid", "RBP(rel=1)"], progress=False)
    mine = {(r, t, m): v for r, t, m, v in res.per_topic}
    # (run, topic) pairs where a group of tied scores among the top 1000 holds a relevant document
    rel = store.sql("SELECT topic, doc FROM qrels WHERE qrels = 'dl19' AND grade >= 1").df()
    top = rows[rows["rank"] <= 1000].merge(rel.assign(relevant=True), on=["topic", "doc"], how="left")
    sizes = top.groupby(["run", "topic", "score"]).doc.transform("size")
    mixed = set(map(tuple, top[(sizes > 1) & top.relevant.fillna(False).astype(bool)][["run", "topic"]].to_numpy()))
    counts = {"RBP": 0, "RBP_resid": 0, "RBP(rel=1)": 0, "tied": 0, "tied equal": 0, "means": 0}
    column = "RBP(0.80)@1000"
    for name, run in dl19["evaluation"].items():
        ev = TrecEval(run, dl19["qrels"])
        graded, _ = ev.get_rbp(p=0.8, per_query=True, binary_topical_relevance=False)
        binary, resid = ev.get_rbp(p=0.8, per_query=True, binary_topical_relevance=True)
        for metric, series in (("RBP", graded[column]), ("RBP_resid", resid[column].dropna())):
            for topic, v in series.items():
                assert math.isclose(mine[(name, topic, metric)], v, rel_tol=REL_TOL, abs_tol=1e-15), (name, topic)
                counts[metric] += 1
        for topic, v in binary[column].items():
            if (name, topic) in mixed:
                counts["tied"] += 1
                counts["tied equal"] += math.isclose(
                    mine[(name, topic, "RBP(rel=1)")], v, rel_tol=REL_TOL, abs_tol=1e-15
                )
                continue
            assert math.isclose(mine[(name, topic, "RBP(rel=1)")], v, rel_tol=REL_TOL, abs_tol=1e-15), (name, topic)
            counts["RBP(rel=1)"] += 1
        if resid[column].isna().any() or len(resid) < 43:  # some topic without a per-topic residual
            _, mean_resid = ev.get_rbp(p=0.8, binary_topical_relevance=True)
            assert math.isclose(res.mean(name, "RBP_resid"), mean_resid, rel_tol=REL_TOL)
            counts["means"] += 1
    # 1591 (run, topic) pairs; 17 have no relevant document in the top 1000 (no per-topic value in
    # trectools): one run's mean covers them
    assert counts == {"RBP": 1574, "RBP_resid": 1574, "RBP(rel=1)": 1183, "tied": 391, "tied equal": 268, "means": 1}

"""Real data: every official TREC Deep Learning 2019/2020 passage run scores as NIST published.

``../shared/data/trec-dl-20{19,20}-passage/official_nist_scores.tsv`` holds NIST's summary scores
(4 decimals). The track's official evaluation (``passages-eval``) uses the grades 0..3 as nDCG gains
and counts grade >= 2 as relevant for the binary measures (trec_eval -l 2). Per PROVENANCE.md:

* 2019: ``passages-eval`` rows (binary measures at rel=2); the ``trec_eval`` rows are plain
  trec_eval (rel=1, same nDCG).
* 2020: ``passages-eval`` rows carry only ndcg_cut_10/100/1000. The ``trec_eval`` rows were computed
  on qrels with grade 1 mapped to 0: binary measures at rel=2, nDCG with gains 0, 2, 3 for the
  grades 1, 2, 3 (``nDCG(gains=0:2:3)``).

All runs of a year are ingested once (module fixture) and evaluated in one call.
"""

from __future__ import annotations

import csv

import pytest
from support import DATA_DIR, need_shared

import evalstore

pytestmark = [pytest.mark.slow, pytest.mark.shared]
TOL = 5e-5 + 1e-9

BINARY = {
    "map": "AP",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "P_10": "P{p}@10",
    "P_100": "P{p}@100",
    "P_1000": "P{p}@1000",
    "recall_10": "R{p}@10",
    "recall_100": "R{p}@100",
    "recall_1000": "R{p}@1000",
}
GAIN = {"ndcg": "nDCG{g}", "ndcg_cut_10": "nDCG{g}@10", "ndcg_cut_100": "nDCG{g}@100", "ndcg_cut_1000": "nDCG{g}@1000"}


def metric_for(measure: str, rel: int, gains: str | None) -> str:
    if measure in BINARY:
        name = BINARY[measure]
        name = name if "{p}" in name else name + "{p}"
        return name.format(p=f"(rel={rel})")
    return GAIN[measure].format(g=f"(gains={gains})" if gains else "")


def official(year: str) -> list[tuple[str, str, str, float]]:
    with open(DATA_DIR / f"trec-dl-{year}-passage" / "official_nist_scores.tsv", encoding="utf-8") as f:
        return [
            (r["run_tag"], r["summary"], r["measure"], float(r["value"])) for r in csv.DictReader(f, delimiter="\t")
        ]


# (year, summary) -> (relevance threshold of the binary measures, nDCG gains)
SETTINGS = {
    ("2019", "passages-eval"): (2, None),
    ("2019", "trec_eval"): (1, None),
    ("2020", "passages-eval"): (2, None),
    ("2020", "trec_eval"): (2, "0:2:3"),
}


@pytest.fixture(scope="module")
def dl_store():
    need_shared(DATA_DIR / "trec-dl-2019-passage")
    need_shared(DATA_DIR / "trec-dl-2020-passage")
    stores = {}
    for year in ("2019", "2020"):  # one store per year: run tags repeat across years
        d = DATA_DIR / f"trec-dl-{year}-passage"
        s = stores[year] = evalstore.open(":memory:")
        s.ingest_qrels(d / "qrels.txt", name=f"dl{year}", progress=False)
        # runs named after their files (<run_tag>.run.gz; PROVENANCE.md: tag == file name)
        s.ingest_run(sorted(d.glob("runs/*.run.gz")), name_from="file", progress=False)
    yield stores
    for s in stores.values():
        s.close()


# The track's headline measures (nDCG@10 with grades as gains, AP and RR at rel=2), in the rows that
# PROVENANCE.md names as the reference: they must match with evalstore's defaults, no excuse.
HEADLINE = {
    "2019": {("passages-eval", "ndcg_cut_10"), ("passages-eval", "map"), ("passages-eval", "recip_rank")},
    "2020": {("passages-eval", "ndcg_cut_10"), ("trec_eval", "map"), ("trec_eval", "recip_rank")},
}


def float32_scores(store, qrels: str, run: str, metric: str) -> float:
    """``metric`` for ``run`` under the ``trec_eval9`` convention: scores compared in single
    precision, as trec_eval up to 9.0.x stored them (``float sim`` in trec_format.h; v10 reads
    doubles): near-equal scores tie and are then ordered by docno descending."""
    return store.evaluate(qrels, [run], [metric], save=False, convention="trec_eval9").mean(run, metric)


def python_float32(store, qrels: str, run: str, metric: str) -> float:
    """The same, independently of the convention: the scores rounded to float32 in Python."""
    import numpy as np

    rows = store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [run]).rows
    run_dict: dict[str, dict[str, float]] = {}
    for topic, doc, score in rows:
        run_dict.setdefault(topic, {})[doc] = float(np.float32(score))
    q: dict[str, dict[str, int]] = {}
    for topic, doc, grade in store.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = ?", [qrels]).rows:
        q.setdefault(topic, {})[doc] = grade
    return evalstore.evaluate(q, {run: run_dict}, [metric]).mean(run, metric)


@pytest.mark.parametrize("year", ["2019", "2020"])
def test_every_official_score_reproduces_with_the_trec_eval9_convention(dl_store, year):
    """Historic precision: with scores compared in single precision (--convention trec_eval9) every
    NIST official value of the year reproduces to its 4 printed decimals, with no exception."""
    rows = official(year)
    wanted = {(summary, measure): metric_for(measure, *SETTINGS[(year, summary)]) for _, summary, measure, _ in rows}
    runs = sorted({r for r, _, _, _ in rows})
    res = (
        dl_store[year]
        .evaluate(f"dl{year}", runs, sorted(set(wanted.values())), save=False, convention="trec_eval9")
        .table()
    )
    bad = [
        f"{run} {summary} {measure}: {res[run][wanted[(summary, measure)]]:.5f} vs NIST {value:.4f}"
        for run, summary, measure, value in rows
        if abs(res[run][wanted[(summary, measure)]] - value) > TOL
    ]
    assert not bad, f"{len(bad)} of {len(rows)} differ:\n" + "\n".join(bad[:20])
    assert len(rows) > {"2019": 900, "2020": 600}[year]


@pytest.mark.parametrize("year", ["2019", "2020"])
def test_every_run_matches_nist(dl_store, year):
    rows = official(year)
    runs = sorted({r for r, _, _, _ in rows})
    assert len(runs) == {"2019": 37, "2020": 59}[year]
    wanted = {(summary, measure): metric_for(measure, *SETTINGS[(year, summary)]) for _, summary, measure, _ in rows}
    store = dl_store[year]
    res = store.evaluate(f"dl{year}", runs, sorted(set(wanted.values())), save=False)
    table = res.table()
    bad = [
        (run, summary, measure, value)
        for run, summary, measure, value in rows
        if abs(table[run][wanted[(summary, measure)]] - value) > TOL
    ]
    # the headline measures match for every run, as evalstore computes them by default
    assert not [b for b in bad if (b[1], b[2]) in HEADLINE[year]], bad
    # any other difference must be NIST's older trec_eval reading scores in single precision
    unexplained = [
        f"{run} {summary} {measure} [{wanted[(summary, measure)]}]: "
        f"evalstore {table[run][wanted[(summary, measure)]]:.5f}, NIST {value:.4f}"
        for run, summary, measure, value in bad
        if abs(float32_scores(store, f"dl{year}", run, wanted[(summary, measure)]) - value) > TOL
    ]
    assert not unexplained, f"{len(unexplained)} of {len(rows)} official scores differ:\n" + "\n".join(unexplained[:30])
    # the headline measures are published for every run
    for key in HEADLINE[year]:
        assert {r for r, s, m, _ in rows if (s, m) == key} == set(runs)


def test_single_precision_scores_explain_tua1_1(dl_store):
    """The one official score evalstore does not reproduce with double scores: TUA1-1's plain trec_eval
    MAP (rel=1) for 2019, 0.47236 with double scores but 0.4723 at NIST; with scores rounded to single
    precision (trec_eval <= 9.0.x) near-ties reorder and the value becomes NIST's."""
    store = dl_store["2019"]
    nist = {(s, m): v for r, s, m, v in official("2019") if r == "TUA1-1"}
    ours = store.evaluate("dl2019", ["TUA1-1"], ["AP"], save=False).mean("TUA1-1", "AP")
    assert abs(ours - nist[("trec_eval", "map")]) > TOL
    assert abs(float32_scores(store, "dl2019", "TUA1-1", "AP") - nist[("trec_eval", "map")]) <= TOL
    assert float32_scores(store, "dl2019", "TUA1-1", "AP") == python_float32(store, "dl2019", "TUA1-1", "AP")


def test_headline_measures_use_the_track_settings(dl_store):
    """nDCG@10 with grades as gains; AP and RR with rel=2 (the passages-eval numbers), not rel=1."""
    res = dl_store["2019"].evaluate("dl2019", ["bm25base_p"], ["nDCG@10", "AP(rel=2)", "AP", "RR(rel=2)"], save=False)
    nist = {(s, m): v for r, s, m, v in official("2019") if r == "bm25base_p"}
    t = res.table()["bm25base_p"]
    assert abs(t["AP(rel=2)"] - nist[("passages-eval", "map")]) <= TOL  # 0.3013 (PROVENANCE.md)
    assert abs(t["AP"] - nist[("trec_eval", "map")]) <= TOL  # 0.3773 at rel >= 1
    assert abs(t["nDCG@10"] - nist[("passages-eval", "ndcg_cut_10")]) <= TOL
    assert abs(t["RR(rel=2)"] - nist[("passages-eval", "recip_rank")]) <= TOL

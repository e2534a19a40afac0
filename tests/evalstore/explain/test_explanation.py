"""evalstore explain: hand-computed per-rank tables of AP, nDCG@10 and ERR@20 (ties in score, an
unjudged document, a relevant document never retrieved), the conventions, the errors, and the
agreement of every explained value with eval's stored value (the same SQL block).

The collection (topic 1) used by the hand computations::

    qrels: d1 3, d2 0, d3 1, d4 2, d5 1 (never retrieved), d6 2       R = 5 (grade >= 1)
    run, file order:  d2 5.0 | d1 4.0 | dX 3.5 (unjudged) | d3 3.0 | d6 3.0 | d7 2.0 (unjudged) | d4 1.0

trec_eval's order breaks the tie d3/d6 (score 3.0) by docno descending: d6 (rank 4) before d3
(rank 5). NTCIREVAL's (file order) keeps d3 at 4 and d6 at 5.
"""

from __future__ import annotations

import glob
import json
import math
from fractions import Fraction as F

import pytest

import evalstore
from evalstore.errors import MetricError
from evalstore.explain.explanation import compare_conventions, explain, explain_runs, explain_topics, explainable
from evalstore.explain.tables import conventions_report, explanation_report
from evalstore.metrics import sqlfile
from evalstore.metrics.explain_sql import split_final_select
from evalstore.metrics.options import EvalOptions

QRELS = """1 0 d1 3
1 0 d2 0
1 0 d3 1
1 0 d4 2
1 0 d5 1
1 0 d6 2
2 0 e1 0
2 0 e2 0
3 0 f1 1
"""
RUN = """1 Q0 d2 1 5.0 tiny
1 Q0 d1 2 4.0 tiny
1 Q0 dX 3 3.5 tiny
1 Q0 d3 4 3.0 tiny
1 Q0 d6 5 3.0 tiny
1 Q0 d7 6 2.0 tiny
1 Q0 d4 7 1.0 tiny
2 Q0 e1 1 1.0 tiny
2 Q0 e9 2 0.5 tiny
"""
TREC_ORDER = ["d2", "d1", "dX", "d6", "d3", "d7", "d4"]
GRADES = [0, 3, None, 2, 1, None, 2]  # in trec_eval's order; None: unjudged


@pytest.fixture
def tiny(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "tiny.txt").write_text(RUN)
    s = evalstore.open(":memory:")
    s.ingest_qrels(tmp_path / "qrels.txt", name="q", progress=False)
    s.ingest_run(tmp_path / "tiny.txt", name="tiny", progress=False)
    yield s
    s.close()


def col(ex, name):
    return ex.column(name)


def close(actual, expected, rel=1e-15):
    """Element-wise: None where None is expected, else within ``rel``."""
    assert len(actual) == len(expected), (actual, expected)
    for a, e in zip(actual, expected):
        same = (a is None) == (e is None) and (e is None or a == pytest.approx(e, rel=rel, abs=1e-300))
        assert same, (actual, expected)
    return True


def test_ap_by_hand(tiny):
    """AP = (1/R) sum over relevant ranks r of count(r)/r:
    d1 at 2: 1/2; d6 at 4: 2/4; d3 at 5: 3/5; d4 at 7: 4/7; R = 5 (d5 is never retrieved)
    AP = (1/2 + 1/2 + 3/5 + 4/7) / 5 = (76/35) / 5 = 76/175 = 0.434285714..."""
    ex = explain(tiny, "AP", "q", "tiny", "1")
    assert col(ex, "rank") == [1, 2, 3, 4, 5, 6, 7]
    assert col(ex, "doc") == TREC_ORDER
    assert col(ex, "grade") == GRADES
    assert col(ex, "gain") == [0, 1, None, 1, 1, None, 1]
    assert col(ex, "cnt") == [0, 1, None, 2, 3, None, 4]
    terms = [None, F(1, 2), None, F(2, 4), F(3, 5), None, F(4, 7)]
    assert close(col(ex, "contribution"), [None if t is None else float(t) for t in terms])
    running, acc = [], F(0)
    for t in terms:
        acc += t or 0
        running.append(float(acc / 5))  # 0, 0.1, 0.1, 0.2, 0.32, 0.32, 76/175
    assert col(ex, "running") == pytest.approx(running, abs=1e-15)
    assert ex.value == pytest.approx(float(F(76, 175)), abs=1e-15)
    assert ex.norm == 5 and ex.R == 5 and ex.total == pytest.approx(float(F(76, 35)), abs=1e-15)
    assert ex.rows[-1][-1] == ex.value  # the last running value is the value, to the bit
    assert ex.ideal_rows == []  # AP has no ideal list


def test_ndcg10_by_hand(tiny):
    """nDCG@10, trec_eval (gain = grade, discount log2(r + 1)):
    DCG  = 3/log2(3) + 2/log2(5) + 1/log2(6) + 2/log2(8)       (d1 at 2, d6 at 4, d3 at 5, d4 at 7)
         = 1.892789 + 0.861353 + 0.386853 + 0.666667 = 3.807662
    ideal: grades 3, 2, 2, 1, 1 at ranks 1..5
    IDCG = 3/log2(2) + 2/log2(3) + 2/log2(4) + 1/log2(5) + 1/log2(6)
         = 3 + 1.261860 + 1 + 0.430677 + 0.386853 = 6.079390
    nDCG@10 = 3.807662 / 6.079390 = 0.626323"""
    ex = explain(tiny, "nDCG@10", "q", "tiny", "1")
    lg = math.log2
    assert col(ex, "doc") == TREC_ORDER
    assert col(ex, "gain") == [0, 3, None, 2, 1, None, 2]
    assert close(col(ex, "discount"), [lg(2), lg(3), None, lg(5), lg(6), None, lg(8)])
    terms = [None, 3 / lg(3), None, 2 / lg(5), 1 / lg(6), None, 2 / lg(8)]  # gain 0 adds nothing
    assert close(col(ex, "contribution"), terms)
    idcg = 3 / lg(2) + 2 / lg(3) + 2 / lg(4) + 1 / lg(5) + 1 / lg(6)
    assert ex.norm == pytest.approx(idcg, rel=1e-15)
    assert [r[0] for r in ex.ideal_rows] == [1, 2, 3, 4, 5]
    assert [r[1] for r in ex.ideal_rows] == [3, 2, 2, 1, 1]
    assert [r[-1] for r in ex.ideal_rows][-1] == pytest.approx(idcg, rel=1e-15)  # the ideal's running sum = the norm
    dcg = sum(t for t in terms if t is not None)
    assert ex.value == pytest.approx(dcg / idcg, rel=1e-14)
    assert round(ex.value, 6) == 0.626323
    first = 3 / lg(3) / idcg
    assert col(ex, "running")[:4] == pytest.approx([0, first, first, (3 / lg(3) + 2 / lg(5)) / idcg])


def test_err_by_hand(tiny):
    """ERR@20 as gdeval computes it: R(g) = (2^g - 1) / 2^4 (MAX_JUDGMENT 4), the term at rank r is
    R(g_r)/r times the probability of reaching r, prod_{i<r} (1 - R(g_i)):
    rank 2, d1 g3: R = 7/16                 term (7/16)/2                          = 0.21875
    rank 4, d6 g2: R = 3/16, reach 9/16     term (9/16)(3/16)/4                    = 0.0263671875
    rank 5, d3 g1: R = 1/16, reach 9/16*13/16  term (9/16)(13/16)(1/16)/5          = 0.005712890625
    rank 7, d4 g2: R = 3/16, reach 9/16*13/16*15/16  term (...)(3/16)/7            = 0.011476701...
    ERR@20 = 0.262307..."""
    ex = explain(tiny, "ERR@20", "q", "tiny", "1")
    p = {2: F(7, 16), 4: F(3, 16), 5: F(1, 16), 7: F(3, 16)}
    reach, total, terms = F(1), F(0), {}
    for r in (2, 4, 5, 7):
        terms[r] = p[r] * reach / r
        total += terms[r]
        reach *= 1 - p[r]
    assert col(ex, "gain") == [None, 7, None, 3, 1, None, 3]  # 2^g - 1; grade 0 and unjudged: no term
    assert col(ex, "p") == [None, 7 / 16, None, 3 / 16, 1 / 16, None, 3 / 16]
    reach = [None, 1, None, 9 / 16, 9 / 16 * 13 / 16, None, 9 / 16 * 13 / 16 * 15 / 16]
    assert close(col(ex, "go_on"), reach, 1e-14)
    expected = [None if r not in terms else float(terms[r]) for r in range(1, 8)]
    assert close(col(ex, "contribution"), expected, 1e-14)
    assert ex.value == pytest.approx(float(total), rel=1e-14)
    assert round(ex.value, 6) == 0.262307
    assert ex.norm == 1 and ex.ideal_rows == []


def test_ties_and_unjudged(tiny):
    """The tie d3/d6 at score 3.0 goes docno descending; the unjudged dX keeps its rank 3, has no grade,
    adds nothing, and the running value stays."""
    ex = explain(tiny, "P@5", "q", "tiny", "1")
    rows = ex.records()
    assert [r["doc"] for r in rows[3:5]] == ["d6", "d3"] and [r["score"] for r in rows[3:5]] == [3.0, 3.0]
    x = rows[2]
    assert (x["doc"], x["rank"], x["grade"], x["contribution"]) == ("dX", 3, None, None)
    assert x["running"] == rows[1]["running"] == 0.2  # P@5: one relevant in the top 2 -> 1/5
    assert [r["running"] for r in rows] == pytest.approx([0, 0.2, 0.2, 0.4, 0.6, 0.6, 0.6])  # d4 at 7 is past k


def test_rr_takes_the_largest_term(tiny):
    ex = explain(tiny, "RR", "q", "tiny", "1")
    assert ex.running_kind == "max"
    assert close(col(ex, "contribution"), [None, 1 / 2, None, 1 / 4, 1 / 5, None, 1 / 7])
    assert col(ex, "running") == pytest.approx([0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    assert ex.value == 0.5


def test_ntcireval_order_changes_ndcg_not_ap(tiny):
    """File order puts d3 (grade 1) at 4 and d6 (grade 2) at 5: nDCG@10 drops by
    (2 - 1)/log2(5) - (2 - 1)/log2(6) over the IDCG; AP's terms are the same (both are relevant)."""
    te = explain(tiny, "nDCG@10", "q", "tiny", "1")
    nt = explain(tiny, "nDCG@10", "q", "tiny", "1", options=EvalOptions("ntcireval"))
    assert col(nt, "doc") == ["d2", "d1", "dX", "d3", "d6", "d7", "d4"]
    assert col(nt, "trec_eval rank") == [1, 2, 3, 5, 4, 6, 7]
    lg = math.log2
    assert te.value - nt.value == pytest.approx((1 / lg(5) - 1 / lg(6)) / te.norm, rel=1e-12)
    ap = explain(tiny, "AP", "q", "tiny", "1")
    assert explain(tiny, "AP", "q", "tiny", "1", options=EvalOptions("ntcireval")).value == ap.value


def test_compare_conventions(tiny):
    cases = compare_conventions(tiny, "nDCG@10", "q", "tiny", "1")
    assert list(cases) == ["trec_eval", "trec_eval9", "ntcireval", "ir_measures"]
    assert cases["trec_eval"].value == cases["trec_eval9"].value == cases["ir_measures"].value
    assert cases["ntcireval"].value < cases["trec_eval"].value
    report = conventions_report(cases)
    summary, ranks = report.tables
    assert [r[0] for r in summary.rows] == list(cases)
    assert summary.rows[2][4].endswith("vs trec_eval") and summary.rows[1][4] == "same value"
    assert [(r[0], r[3:]) for r in ranks.rows] == [("d6", (4, 4, 5, 4)), ("d3", (5, 5, 4, 5))]
    # a topic without relevant documents: ntcireval does not evaluate it
    cases = compare_conventions(tiny, "AP", "q", "tiny", "2")
    assert isinstance(cases["ntcireval"], str) and "no relevant document" in cases["ntcireval"]
    assert cases["trec_eval"].value == 0.0


def test_explain_topics(tiny):
    cases = explain_topics(tiny, "AP", "q", "tiny")
    assert list(cases) == ["1", "2"] and cases["2"].value == 0.0  # topic 2: R = 0 scores 0 under trec_eval
    assert cases["1"].rows == explain(tiny, "AP", "q", "tiny", "1").rows


def test_errors(tiny):
    with pytest.raises(MetricError, match="explain works for .*AP.*nDCG"):
        explain(tiny, "infAP", "q", "tiny", "1")
    with pytest.raises(MetricError, match="names 2 metrics"):
        explain(tiny, "P.5,10", "q", "tiny", "1")
    with pytest.raises(MetricError, match="topic '3' is not evaluated: run 'tiny' retrieves nothing"):
        explain(tiny, "AP", "q", "tiny", "3")
    with pytest.raises(MetricError, match="topic '9' is not evaluated: qrels 'q' judge no document"):
        explain(tiny, "AP", "q", "tiny", "9")
    ex = explain(
        tiny, "AP", "q", "tiny", "3", options=EvalOptions(complete=True)
    )  # trec_eval -c: the missing topic scores 0
    assert ex.rows == [] and ex.value == 0.0 and ex.R == 1


def test_explainable_metrics_and_declarations():
    names = explainable()
    for m in ("AP", "nDCG", "ERR", "ERR-ntcir", "nERR-ntcir", "P", "RR", "R", "Q-measure", "Bpref", "Success"):
        assert m in names
    f = sqlfile.parse_sql_file(
        "-- @metric X\n-- reads: rl_judged\n-- explain: tems\nWITH terms AS (SELECT * FROM rl_judged) "
        "SELECT qrels_id, run_id, topic, 1 AS value FROM terms\n",
        "x.sql",
    )
    assert any("declares explain tems but defines no CTE tems" in p for p in sqlfile.problems(f))
    f = sqlfile.parse_sql_file(
        "-- @metric X\n-- reads: rl_judged\n-- explain: terms, running=min\nWITH terms AS (SELECT * FROM rl_judged) "
        "SELECT qrels_id, run_id, topic, 1 AS value FROM terms\n",
        "x.sql",
    )
    assert any("running=min" in p for p in sqlfile.problems(f))


def test_split_final_select():
    ctes, final = split_final_select("WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) -- SELECT\nSELECT * FROM b")
    assert ctes == "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a)" and final == "SELECT * FROM b"
    with pytest.raises(MetricError):
        split_final_select("SELECT 1")


def test_report_and_formats(tiny):
    ex = explain(tiny, "nDCG@10", "q", "tiny", "1")
    report = explanation_report(ex)
    assert [t.columns for t in report.tables] == [
        ["rank", "doc", "score", "grade", "gain", "discount", "contribution", "running"],
        ["rank", "gain", "discount", "contribution", "running"],
    ]
    line = f"nDCG@10 of run tiny on topic 1: {ex.value!r} = sum of the contributions / norm"
    assert report.legend[0].startswith(line)
    assert report.document["value"] == ex.value and len(report.document["rows"]) == 7


def test_cli(tiny, cli, tmp_path):
    db = tmp_path / "s.duckdb"
    with evalstore.open(db) as s:
        (tmp_path / "qrels.txt").write_text(QRELS)
        (tmp_path / "tiny.txt").write_text(RUN)
        s.ingest_qrels(tmp_path / "qrels.txt", name="q", progress=False)
        s.ingest_run(tmp_path / "tiny.txt", name="tiny", progress=False)
    code, out, err = cli("explain", "AP", "--topic", "1", "--db", db)
    assert code == 0, err
    assert "d6" in out and "0.4343" in out and "76/175" not in out
    assert "AP of run tiny on topic 1: 0.4342857142857143" in out  # the legend, under the table in plain text
    code, out, err = cli("explain", "ERR@20", "--topic", "1", "--db", db, "-f", "json")
    doc = json.loads(out)
    assert doc["value"] == pytest.approx(0.262307, abs=1e-6) and [r["doc"] for r in doc["rows"]] == TREC_ORDER
    for fmt in ("csv", "tsv", "markdown", "latex", "table"):
        code, out, err = cli("explain", "nDCG@10", "--topic", "1", "--db", db, "-f", fmt)
        assert code == 0 and "d6" in out, (fmt, err)
    code, out, err = cli("explain", "nDCG@10", "--topic", "1", "--db", db, "-o", tmp_path / "x.parquet")
    assert code == 0 and (tmp_path / "x.parquet").exists()
    code, out, err = cli("explain", "nDCG@10", "--topic", "1", "--db", db, "--compare-conventions")
    assert code == 0 and "ntcireval" in out and "rank trec_eval9" in out
    code, out, err = cli("explain", "AP", tmp_path / "qrels.txt", tmp_path / "tiny.txt", "--topic", "1", "-f", "csv")
    assert code == 0 and out.splitlines()[0] == "rank,doc,score,grade,gain,discount,cnt,contribution,running"
    code, out, err = cli("explain", "infAP", "--topic", "1", "--db", db)
    assert code != 0 and "explain works for" in err


# --------------------------------------------------------------------------- agreement with eval
#: Every explainable metric, with parameters that change the relation (cutoffs, rel, gains, judged_only).
AGREEMENT_METRICS = [
    "AP", "AP@10", "AP(rel=2)", "AP(judged_only=true)", "GM_AP", "P@5", "P(rel=2)@10", "R@20", "RelP@10", "Rprec",
    "Success@3", "RR", "RR@5", "nDCG", "nDCG@10", "nDCG(dcg=exp-log2)@10", "nDCG(gains=0:1:3:7)@10",
    "nDCG(judged_only=true)@10", "DCG@10", "Bpref", "ERR", "ERR@20", "ERR-ntcir@10", "nERR-ntcir@10", "nERR-ntcir",
    "Q-measure", "Q-measure(beta=0.5)@10", "AP-ntcir@10", "MSnDCG@10", "nDCG-JK@10", "nDCG-JK(b=0)@10",
]  # fmt: skip


def agreement(store, qrels, runs, conventions=("trec_eval", "ntcireval")) -> int:
    """Explain every (metric, run, topic): each value equals eval's stored value exactly, and the last
    running value equals it too. Returns the number of cases."""
    n = 0
    for conv in conventions:
        stored = store.evaluate(qrels, runs, AGREEMENT_METRICS, convention=conv, progress=False)
        for m in AGREEMENT_METRICS:
            cases = explain_runs(store, m, qrels, runs, options=EvalOptions(conv))
            assert len(cases) == len(stored.topics()) * len(next(iter(stored.topics().values())))
            for (run, topic), ex in cases.items():
                v = stored.value(run, topic, m)
                assert ex.value == v, (conv, m, run, topic)
                if ex.rows and ex.total is not None and ex.norm:
                    assert ex.rows[-1][-1] == v, (conv, m, run, topic)  # the last running value, to the bit
                n += 1
    return n


def test_agreement_on_the_sample(sample_store):
    n = agreement(sample_store, "sample", sample_store.run_names())
    assert n == 2 * len(AGREEMENT_METRICS) * 6 * 8  # conventions x metrics x runs x topics


@pytest.mark.shared
@pytest.mark.slow
def test_err_does_not_depend_on_the_other_runs(shared_dir):
    """ERR's probability of reaching rank r was exp of a floating window sum, whose last bit depended
    on the rows evaluated together (2 of the 1,591 DL 2019 values differed between one run and all
    37); the exact window sum makes every value the same, which explain's exact check needs."""
    d = shared_dir / "data" / "trec-dl-2019-passage"
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted(glob.glob(str(d / "runs" / "*.gz"))), progress=False)
        runs = s.run_names()
        together = s.evaluate("dl19", runs, ["ERR"], save=False, progress=False)
        for run in runs:
            alone = s.evaluate("dl19", [run], ["ERR"], save=False, progress=False)
            assert alone.per_topic == [r for r in together.per_topic if r[0] == run]


@pytest.mark.shared
@pytest.mark.slow
def test_agreement_on_trec_dl_2019(shared_dir):
    d = shared_dir / "data" / "trec-dl-2019-passage"
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted(glob.glob(str(d / "runs" / "*.gz")))[:3], progress=False)
        n = agreement(s, "dl19", s.run_names())
    assert n == 2 * len(AGREEMENT_METRICS) * 3 * 43


# ------------------------------------------------------------------ generated answers
ANSWER_METRICS = {
    "manual": ["strict_vital", "strict_all", "vital", "all", "weighted", "weighted(okay=0.3,partial=0)", "vital@120"],
    "support.manual": ["support_precision", "support_recall"],
}


def test_nugget_and_support_metrics_explained_item_by_item(rag_store):
    """Every nugget and support metric of every run on every topic of the RAG sample: the block's
    relation over the judged answer, nugget by nugget (or citation by citation), whose last running
    value is eval's value (explain checks it itself, exactly)."""
    n = 0
    for qrels, metrics in ANSWER_METRICS.items():
        for metric in metrics:
            found = explain_runs(rag_store, metric, qrels)
            assert len(found) == 6 * 8, (qrels, metric)
            for ex in found.values():
                assert ex.kind == ("nuggets" if qrels == "manual" else "support")
                assert ex.rows and ex.columns[:3] == ["rank", "doc", "grade"] and ex.columns[-1] == "running"
                n += 1
    assert n == 9 * 6 * 8
    ex = explain(rag_store, "vital", "manual", "rag01", "R001")
    nuggets = rag_store.sql("SELECT count(*) FROM nuggets WHERE topic = 'R001'").rows[0][0]
    assert len(ex.rows) == nuggets and ex.norm == sum(r[ex.columns.index("importance")] == "vital" for r in ex.rows)
    assert ex.R is None and "nuggets" in " ".join(explanation_report(ex).legend)

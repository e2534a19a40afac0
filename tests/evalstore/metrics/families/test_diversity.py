"""Diversity (intent-aware) evaluation: subtopic qrels as an input, sql/diversity.sql's metrics
worked out by hand on a small topic, agreement with ndeval (pyndeval through ir_measures 0.4.3) on
the ir_measures conformance kit, and diversity metrics on subsamples, stored like any metric."""

from __future__ import annotations

import collections
import csv
import math
import sys
from math import log2

import duckdb
import pytest
from support import SHARED, need_shared

import evalstore
from evalstore.cli.app import main
from evalstore.db import available_migrations
from evalstore.errors import IngestError
from evalstore.evaluation.in_memory import Evaluator
from evalstore.meta import kendall
from evalstore.metrics import engine, sql_functions
from evalstore.metrics.options import EvalOptions
from evalstore.metrics.ranked_list import render
from evalstore.metrics.udf_diversity import greedy_gains
from evalstore.subsample import create_subsamples

KIT = SHARED / "conformance" / "ir_measures"

# The hand-worked topic (ndeval's subtopic qrels: topic subtopic doc grade). Subtopic 4 is never
# relevant, so S = 3 (ndeval ignores it).
QRELS = """\
1 1 a 1
1 2 a 2
1 3 a 0
1 4 a 0
1 1 b 1
1 3 c 1
1 1 d 0
2 1 e 1
2 1 f 0
"""
# pyndeval's order is score descending, ties by docno ASCENDING: b, c, d, a, z
# (trec_eval's order, used by the D-measures: b, d, c, a, z).
RUN = """\
1 Q0 b 1 3.0 r
1 Q0 d 2 2.0 r
1 Q0 c 3 2.0 r
1 Q0 a 4 1.0 r
1 Q0 z 5 0.5 r
"""
PROBS = "1 1 0.5\n1 2 0.3\n1 3 0.2\n"


@pytest.fixture
def store(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.run").write_text(RUN)
    (tmp_path / "p.txt").write_text(PROBS)
    s = evalstore.open(":memory:")
    s.ingest_qrels(tmp_path / "q.txt", name="div", format="subtopic", progress=False)
    s.ingest_qrels(tmp_path / "q.txt", name="divp", format="subtopic", intent_probs=tmp_path / "p.txt", progress=False)
    s.ingest_run(tmp_path / "r.run", progress=False)
    yield s
    s.close()


def _topic1(store, qrels: str, metrics: list[str], **options) -> dict[str, float]:
    res = store.evaluate(qrels, ["r"], metrics, save=False, **options)
    return {m: v for _, t, m, v in res.per_topic if t == "1"}


# --------------------------------------------------------------------------- input
def test_subtopic_qrels_are_stored_per_subtopic_and_as_max_grade(store):
    assert store.sql("SELECT doc, grade FROM qrels WHERE qrels = 'div' AND topic = '1' ORDER BY doc").rows == [
        ("a", 2),
        ("b", 1),
        ("c", 1),
        ("d", 0),
    ]
    assert store.sql("SELECT count(*) FROM subtopic_qrels WHERE qrels = 'div'").rows == [(9,)]
    # uniform probabilities over a topic's subtopics unless given
    probs = dict(
        ((t, st), p) for t, st, p in store.sql("SELECT topic, subtopic, prob FROM intents WHERE qrels = 'div'").rows
    )
    assert probs[("1", "1")] == pytest.approx(0.25) and probs[("2", "1")] == pytest.approx(1.0)
    given = store.sql("SELECT subtopic, prob, given FROM intents WHERE qrels = 'divp' AND topic = '1' ORDER BY 1").rows
    assert given == [("1", 0.5, True), ("2", 0.3, True), ("3", 0.2, True), ("4", 0.0, False)]


def test_ntcir_intent_files(tmp_path):
    (tmp_path / "0001.rel").write_text("i1 a L2\ni2 a L1\ni2 b L1\n")
    (tmp_path / "0002.rel").write_text("i1 c L1\n")
    (tmp_path / "all.txt").write_text("0001 i1 a L2\n0001 i2 a L1\n0001 i2 b L1\n0002 i1 c L1\n")
    with evalstore.open(":memory:") as s:
        per_topic = [tmp_path / "0001.rel", tmp_path / "0002.rel"]
        s.ingest_qrels(per_topic, name="per", format="ntcir-intents", progress=False)
        s.ingest_qrels(tmp_path / "all.txt", name="one", format="ntcir-intents", progress=False)
        q = "SELECT topic, subtopic, doc, grade FROM subtopic_qrels WHERE qrels = ? ORDER BY ALL"
        assert s.sql(q, ["per"]).rows == s.sql(q, ["one"]).rows
        assert len(s.sql(q, ["per"]).rows) == 4


def test_bad_subtopic_lines_name_file_line_and_store_nothing(tmp_path):
    (tmp_path / "bad.txt").write_text("1 1 a 1\n1 2 a x\n")
    (tmp_path / "dup.txt").write_text("1 1 a 1\n1 1 a 0\n")
    (tmp_path / "ok.txt").write_text("1 1 a 1\n")
    (tmp_path / "p.txt").write_text("1 1 1.5\n")
    with evalstore.open(":memory:") as s:
        with pytest.raises(IngestError, match="line 2: grade 'x' \\(column 4\\) is not an integer"):
            s.ingest_qrels(tmp_path / "bad.txt", format="subtopic", progress=False)
        with pytest.raises(IngestError, match="judged twice for the same subtopic"):
            s.ingest_qrels(tmp_path / "dup.txt", format="subtopic", progress=False)
        with pytest.raises(IngestError, match="not a number between 0 and 1"):
            s.ingest_qrels(tmp_path / "ok.txt", format="subtopic", intent_probs=tmp_path / "p.txt", progress=False)
        with pytest.raises(IngestError, match="intent probabilities go with diversity judgments"):
            s.ingest_qrels(tmp_path / "ok.txt", intent_probs=tmp_path / "p.txt", progress=False)
        assert s.sql("SELECT (SELECT count(*) FROM qrels_meta), (SELECT count(*) FROM subtopic_qrels_data)").rows == [
            (0, 0)
        ]


def test_drop_removes_the_subtopic_rows(store):
    store.drop_qrels(["div", "divp"])
    q = "SELECT (SELECT count(*) FROM subtopic_qrels_data), (SELECT count(*) FROM subtopic_probs)"
    assert store.sql(q).rows == [(0, 0)]


# --------------------------------------------------------------------------- hand-computed values
def test_ndeval_metrics_by_hand(store):
    # Topic 1, rel=1: S = 3 (subtopics 1: a,b; 2: a; 3: c). Ranking b, c, d, a, z (ties docno ascending).
    # Novelty gains (alpha 0.5): b -> s1 new: 1; c -> s3 new: 1; d: 0; a -> s1 seen once 0.5 + s2 new 1 = 1.5.
    dcg5 = 1 + 1 / log2(3) + 1.5 / log2(5)
    ideal_ideal5 = sum(3 * 0.5 ** (i - 1) / log2(i + 1) for i in range(1, 6))
    # greedy ideal: a (2), then c (1; b would add 0.5), then b (0.5), then d (0)
    assert greedy_gains(["a", "a", "b", "c"], ["1", "2", "1", "3"], 0.5) == [2.0, 1.0, 0.5]
    ideal5 = 2 + 1 / log2(3) + 0.5 / log2(4)
    err5 = 1 + 1 / 2 + 1.5 / 4
    err_ideal_ideal5 = sum(3 * 0.5 ** (i - 1) / i for i in range(1, 6))
    got = _topic1(
        store,
        "div",
        ["alpha_DCG@5", "alpha_nDCG@5", "ERR_IA@5", "nERR_IA@5", "NRBP", "nNRBP", "P_IA@5", "StRecall@2",
         "StRecall@5", "AP_IA"],
    )  # fmt: skip
    assert got["alpha_DCG@5"] == pytest.approx(dcg5 / ideal_ideal5, abs=1e-12)
    assert got["alpha_nDCG@5"] == pytest.approx(dcg5 / ideal5, abs=1e-12)
    assert got["ERR_IA@5"] == pytest.approx(err5 / err_ideal_ideal5, abs=1e-12)
    assert got["nERR_IA@5"] == pytest.approx(err5 / (2 + 1 / 2 + 0.5 / 3), abs=1e-12)
    # NRBP = (1 - (1-a) b) / S * sum beta^(i-1) gain(i) = 0.75/3 * (1 + 0.5 + 0.125 * 1.5) (a is at rank 4)
    nrbp = 0.75 / 3 * (1 + 0.5 + 0.125 * 1.5)
    assert got["NRBP"] == pytest.approx(nrbp, abs=1e-12)
    assert got["nNRBP"] == pytest.approx(nrbp / (0.75 / 3 * (2 + 0.5 + 0.25 * 0.5)), abs=1e-12)
    assert got["P_IA@5"] == pytest.approx((1 + 1 + 0 + 2 + 0) / (5 * 3), abs=1e-12)
    assert got["StRecall@2"] == pytest.approx(2 / 3) and got["StRecall@5"] == 1.0
    # AP per subtopic: s1 (b@1, a@4; R=2): (1/1 + 2/4)/2; s2 (a@4): 1/4; s3 (c@2): 1/2
    assert got["AP_IA"] == pytest.approx((0.75 + 0.25 + 0.5) / 3, abs=1e-12)


def test_rel_2_and_alpha(store):
    # rel=2: only (a, s2) is relevant, S = 1; a is at rank 4
    got = _topic1(store, "div", ["alpha_nDCG(rel=2)@5", "P_IA(rel=2)@5", "alpha_DCG(alpha=0.25)@5"])
    assert got["alpha_nDCG(rel=2)@5"] == pytest.approx(1 / log2(5), abs=1e-12)
    assert got["P_IA(rel=2)@5"] == pytest.approx(1 / 5)
    dcg = 1 + 1 / log2(3) + (0.75 + 1) / log2(5)
    assert got["alpha_DCG(alpha=0.25)@5"] == pytest.approx(
        dcg / sum(3 * 0.75 ** (i - 1) / log2(i + 1) for i in range(1, 6)), abs=1e-12
    )


def test_d_measures_by_hand(store):
    # P(i|q) = 0.5, 0.3, 0.2 for subtopics 1..3 (subtopic 4: not in the given probabilities: 0).
    # GG(a) = 0.5*1 + 0.3*2 = 1.1, GG(b) = 0.5, GG(c) = 0.2, GG(d) = 0.
    # trec_eval order: b, d, c, a, z. D-nDCG@3 = (0.5/1 + 0.2/log2 4) / (1.1 + 0.5/log2 3 + 0.2/log2 4).
    got = _topic1(store, "divp", ["D-nDCG@3", "I-rec@3", "D#-nDCG@3", "D#-nDCG(gamma=1)@3", "I-rec"])
    dn = (0.5 + 0.2 / 2) / (1.1 + 0.5 / log2(3) + 0.2 / 2)
    assert got["D-nDCG@3"] == pytest.approx(dn, abs=1e-12)
    # intents 1..4 (4 has judgments, never relevant); covered in the top 3: 1 (b) and 3 (c)
    assert got["I-rec@3"] == pytest.approx(2 / 4) and got["I-rec"] == pytest.approx(3 / 4)
    assert got["D#-nDCG@3"] == pytest.approx(0.5 * 2 / 4 + 0.5 * dn, abs=1e-12)
    assert got["D#-nDCG(gamma=1)@3"] == pytest.approx(2 / 4)
    # gains= maps levels: level 2 -> 3 gives GG(a) = 0.5 + 0.3*3 = 1.4
    g = _topic1(store, "divp", ["D-nDCG(gains=1:3)@3"])["D-nDCG(gains=1:3)@3"]
    assert g == pytest.approx((0.5 + 0.2 / 2) / (1.4 + 0.5 / log2(3) + 0.2 / 2), abs=1e-12)


def test_topic_without_relevant_docs_and_missing_topics(store):
    # topic 2 is missing from the run: 0 with complete=True (nNRBP too, as ir_measures pads it)
    res = store.evaluate("div", ["r"], ["alpha_nDCG@5", "nNRBP"], save=False, complete=True)
    vals = {(t, m): v for _, t, m, v in res.per_topic}
    assert vals[("2", "alpha_nDCG@5")] == 0.0 and vals[("2", "nNRBP")] == 0.0


# --------------------------------------------------------------------------- ndeval conformance
def _expected() -> dict[tuple[str, str, str], dict[str, float]]:
    exp: dict[tuple[str, str, str], dict[str, float]] = collections.defaultdict(dict)
    with open(need_shared(KIT) / "expected.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["provider"] == "pyndeval":
                exp[(row["collection"], row["run"], row["measure"])][row["topic"]] = float(row["value"])
    return exp


@pytest.mark.shared
def test_agrees_with_pyndeval_on_the_conformance_kit():
    """Every pyndeval row of expected.tsv (collections diversity and tiny td*), per topic and mean,
    within 1e-6. ndeval's nan (nNRBP of a topic without relevant docs) is NULL here, left out of
    the mean (so the `all` row, nan in the kit, is checked through its NULL topic)."""
    exp = _expected()
    measures = sorted({m for _, _, m in exp})
    assert len(measures) == 49
    compared = nan_rows = 0
    with evalstore.open(":memory:") as s:
        for coll, folder in (("tiny", "tiny/diversity"), ("diversity", "diversity")):
            s.ingest_qrels(KIT / folder / "qrels.txt", name=coll, format="subtopic", progress=False)
            s.ingest_run(sorted((KIT / folder / "runs").glob("*.run")), name_from="file", progress=False)
            runs = sorted({r for c, r, _ in exp if c == coll})
            res = s.evaluate(coll, runs, measures, save=False, complete=True)
            got = {(r, m, t): v for r, t, m, v in res.per_topic}
            means = {(r, m): v for r, m, v, *_ in res.means}
            for (c, r, m), per_topic in exp.items():
                if c != coll:
                    continue
                assert {t for t in per_topic if t != "all"} == {t for rr, mm, t in got if (rr, mm) == (r, m)}
                for t, want in per_topic.items():
                    if math.isnan(want):
                        nan_rows += 1
                        if t == "all":
                            assert any(v is None for (rr, mm, _), v in got.items() if (rr, mm) == (r, m))
                        else:
                            assert got[(r, m, t)] is None, (r, m, t)
                        continue
                    value = means[(r, m)] if t == "all" else got[(r, m, t)]
                    assert value == pytest.approx(want, abs=1e-6), (c, r, m, t)
                    compared += 1
    assert nan_rows == 8 and compared == 3528 - 8


# --------------------------------------------------------------------------- store integration
def test_subsample_keeps_subtopic_judgments_and_scores_are_stored(store, tmp_path):
    names = create_subsamples(store, "div", [0.5], trials=1, min_rel=1, min_nonrel=0)
    sub = names[0]
    kept = store.sql(
        "SELECT count(*) FROM subtopic_qrels s JOIN qrels q ON q.qrels = s.qrels AND q.topic = s.topic "
        "AND q.doc = s.doc WHERE s.qrels = ?",
        [sub],
    ).rows[0][0]
    total = store.sql("SELECT count(*) FROM subtopic_qrels WHERE qrels = ?", [sub]).rows[0][0]
    assert total == kept > 0
    # every kept doc keeps all its subtopic rows
    assert (
        store.sql(
            "SELECT count(*) FROM subtopic_qrels p JOIN qrels q ON q.topic = p.topic AND q.doc = p.doc "
            "WHERE p.qrels = 'div' AND q.qrels = ?",
            [sub],
        ).rows[0][0]
        == total
    )
    store.evaluate(sub, ["r"], ["alpha_nDCG@5", "P_IA@5"])
    rows = store.sql("SELECT metric, topic, value FROM scores WHERE qrels = ? ORDER BY ALL", [sub]).rows
    assert {m for m, _, _ in rows} == {"alpha_nDCG@5", "P_IA@5"}
    board = store.sql("SELECT metric, mean FROM leaderboard WHERE qrels = ?", [sub]).rows
    assert len(board) == 2
    assert all(v is not None for _, _, v in rows)


@pytest.mark.shared
def test_meta_evaluation_over_diversity_subsamples():
    need_shared(KIT)
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(KIT / "diversity" / "qrels.txt", name="div", format="subtopic", progress=False)
        s.ingest_run(sorted((KIT / "diversity" / "runs").glob("*.run")), name_from="file", progress=False)
        subs = create_subsamples(s, "div", [0.5], trials=2, min_nonrel=1)
        analysis = kendall(s, "div", ["alpha_nDCG@10", "ERR_IA@10"], missing="zero")
        assert analysis.analysis_id is not None
        stored = s.sql("SELECT DISTINCT qrels, metric FROM scores ORDER BY ALL").rows
        assert ("div", "alpha_nDCG@10") in stored
        # each subsample keeps every subtopic row of the documents it keeps, and nothing else
        for sub in subs:
            q = """SELECT count(*) FROM subtopic_qrels p JOIN qrels q ON q.topic = p.topic AND q.doc = p.doc
                   WHERE p.qrels = 'div' AND q.qrels = ?"""
            assert s.sql(q, [sub]).rows == s.sql("SELECT count(*) FROM subtopic_qrels WHERE qrels = ?", [sub]).rows


def test_ad_hoc_qrels_count_one_subtopic_and_the_evaluator_agrees(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n")
    (tmp_path / "r.run").write_text("1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 c 3 1 r\n")
    metrics = ["alpha_nDCG@3", "P_IA@3", "StRecall@3", "D-nDCG@3", "nNRBP"]
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(tmp_path / "q.txt", name="q", progress=False)
        s.ingest_run(tmp_path / "r.run", progress=False)
        ref = {m: v for _, _, m, v in s.evaluate("q", None, metrics, save=False).per_topic}
    # one subtopic '0': a (rank 2) gain 1, c (rank 3) gain 0.5; ideal c, a (docno desc tie) -> 1, 0.5
    assert ref["alpha_nDCG@3"] == pytest.approx((1 / log2(3) + 0.5 / 2) / (1 + 0.5 / log2(3)))
    assert ref["P_IA@3"] == pytest.approx(2 / 3) and ref["StRecall@3"] == 1.0
    with Evaluator(str(tmp_path / "q.txt"), metrics) as ev:
        got = ev.evaluate(str(tmp_path / "r.run"))["1"]
    assert got == ref


# --------------------------------------------------------------------------- schema and command line
def test_a_store_at_schema_7_upgrades_and_keeps_its_qrels(tmp_path):
    path = tmp_path / "v7.duckdb"
    con = duckdb.connect(str(path))
    sql_functions.register(con)  # migration 4 calls evalstore's SQL functions
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for m in available_migrations()[:7]:
        con.execute(m.sql())
        con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [m.version, m.name])
    con.execute(
        "INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged) VALUES ('q', 'x', 'trec', 'a', 1, 1)"
    )
    con.close()
    (tmp_path / "d.txt").write_text(QRELS)
    with evalstore.open(path) as s:
        assert s.schema_version() == len(available_migrations())
        assert s.sql("SELECT name FROM qrels_sets").rows == [("q",)]
        s.ingest_qrels(tmp_path / "d.txt", name="div", format="subtopic", progress=False)
        assert s.sql("SELECT count(*) FROM subtopic_qrels").rows == [(9,)]


def test_cli_ingests_subtopic_qrels_with_intent_probabilities(tmp_path, monkeypatch, capsys):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "p.txt").write_text(PROBS)
    db = tmp_path / "s.duckdb"
    monkeypatch.delenv("EVALSTORE_DB", raising=False)
    argv = ["evalstore", "ingest", "qrels", str(tmp_path / "q.txt"), "--format", "subtopic", "--intent-probs"]
    monkeypatch.setattr(sys, "argv", [*argv, str(tmp_path / "p.txt"), "--name", "div", "--db", str(db)])
    try:
        main()
    except SystemExit as e:
        assert not e.code, capsys.readouterr()
    assert "qrels 'div' added: 6 rows, 2 topics" in capsys.readouterr().err
    with evalstore.open(db, read_only=True) as s:
        assert s.sql("SELECT count(*) FROM intents WHERE given").rows == [(3,)]


def test_rl_subtopics_is_built_only_when_a_diversity_metric_reads_it():
    opts = EvalOptions("trec_eval", False, None, False)
    for metrics, wanted in ((["AP", "nDCG@10", "ERR@10"], False), (["AP", "alpha_nDCG@10"], True)):
        units, _ = engine.plan([1], engine.resolve_metrics(metrics), opts, {})
        columns = [engine.unit_sql(u, opts, 1.0).columns for u in units]
        assert any("rl_subtopics" in c for c in columns) == wanted
        statements = [s for u, c in zip(units, columns) for s in render([1], [1], u.context, opts, c, "SELECT 1")]
        assert any("rl_subtopics" in s for s in statements) == wanted


def test_the_greedy_ideal_ranking_is_bounded():
    """Issue 39.10: 60,000 (doc, subtopic) pairs tried 3.35 GB under --memory-limit 100MB for minutes
    (cubic time; an interrupt waited 46 s); such a topic is refused at once, with its sizes."""
    import time

    with evalstore.open(":memory:", memory_limit="100MB") as s:
        start = time.monotonic()
        with pytest.raises(evalstore.StoreError, match="60,000 relevant documents and 60,000 subtopics .* memory"):
            s.sql("SELECT diversity_greedy_gains(list(i::VARCHAR), list(i::VARCHAR), 0.5) FROM range(60000) t(i)")
        with pytest.raises(evalstore.StoreError, match="60,000 relevant documents and 3 subtopics .* greedy steps"):
            s.sql("SELECT diversity_greedy_gains(list(i::VARCHAR), list((i % 3)::VARCHAR), 0.5) FROM range(60000) t(i)")
        assert time.monotonic() - start < 10
        ok = s.sql(
            "SELECT len(diversity_greedy_gains(list(i::VARCHAR), list((i % 7)::VARCHAR), 0.5)) FROM range(500) t(i)"
        )
        assert ok.rows == [(500,)]

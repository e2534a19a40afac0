"""evalstore.evaluate on generated answers (evalstore.evaluation.answers): answers and nuggetizer's
assignment records, DataFrames of assignments, support labels and qrels, as dicts, DataFrames or
paths, give the values the store gives for the same files; bad records are named."""

from __future__ import annotations

import json

import pytest

import evalstore
from evalstore.base.resources import rag_sample_dir
from evalstore.errors import EvalstoreError, IngestError

RAG = rag_sample_dir()


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def stored(rag_template):
    """The RAG sample's scores in the store, the reference of the in-memory values."""
    with evalstore.open(rag_template, read_only=True) as s:
        out = {}
        for qrels, metrics in (("manual", ["strict_vital", "vital", "weighted"]), ("support.manual",
                               ["support_precision", "support_recall"]), ("qrels", ["nDCG@10"])):  # fmt: skip
            res = s.evaluate(qrels, ["rag01", "rag02"], metrics, save=False)
            out[qrels] = sorted(res.per_topic)
    return out


def _answers() -> list[dict]:
    return _lines(RAG / "answers" / "rag01.jsonl") + _lines(RAG / "answers" / "rag02.jsonl")


def test_assignment_records_and_answer_dicts(stored):
    assigned = [a for a in _lines(RAG / "assignments.manual.jsonl") if a["run_id"] in ("rag01", "rag02")]
    res = evalstore.evaluate(assigned, _answers(), ["strict_vital", "vital", "weighted"])
    assert sorted(res.per_topic) == stored["manual"]


def test_a_dataframe_of_assignments_and_answers_by_run(stored):
    pd = pytest.importorskip("pandas")
    rows = [{"qid": a["qid"], "run_id": a["run_id"], **n} for a in _lines(RAG / "assignments.manual.jsonl")
            for n in a["nuggets"]]  # fmt: skip
    by_run = {r: [a for a in _answers() if a["run_id"] == r] for r in ("rag01", "rag02")}
    res = evalstore.evaluate(pd.DataFrame(rows), by_run, ["strict_vital", "vital", "weighted"], ci="t")
    assert sorted(res.per_topic) == stored["manual"]
    assert len(res.intervals) == 2 * 3


def test_paths_support_labels_and_qrels(stored):
    answers = [str(RAG / "answers" / "rag01.jsonl"), str(RAG / "answers" / "rag02.jsonl")]
    res = evalstore.evaluate(str(RAG / "support.manual.jsonl"), _answers(), ["support_precision", "support_recall"])
    assert sorted(res.per_topic) == stored["support.manual"]
    res = evalstore.evaluate(RAG / "qrels.txt", _answers(), ["nDCG@10"])  # the references as ranked lists
    assert sorted(res.per_topic) == stored["qrels"]
    res = evalstore.evaluate(str(RAG / "assignments.manual.jsonl"), answers[0], ["vital"])
    assert {r for r, *_ in res.per_topic} == {"rag01"}


def test_bad_records_are_named():
    with pytest.raises(IngestError, match=r"answers\.jsonl, line 2: no topic_id"):
        evalstore.evaluate([{"qid": "q", "run_id": "run", "nuggets": []}],
                           [{"topic_id": "q", "answer": []}, {"answer": []}], ["vital"])  # fmt: skip
    conflicting = [
        {"qid": "q", "run_id": "a", "nuggets": [{"text": "n", "importance": "vital", "assignment": "support"}]},
        {"qid": "q", "run_id": "b", "nuggets": [{"text": "n", "importance": "okay", "assignment": "support"}]},
    ]
    with pytest.raises(EvalstoreError, match="vital in one assignment and okay in another"):
        evalstore.evaluate(conflicting, [{"run_id": "a", "topic_id": "q", "answer": []}], ["vital"])


def test_ranked_lists_are_not_evaluated_by_nugget_metrics():
    with pytest.raises(EvalstoreError, match="vital evaluates generated answers, not ranked lists"):
        evalstore.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["vital"])

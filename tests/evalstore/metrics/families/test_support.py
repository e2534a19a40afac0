"""Weighted support precision and recall (sql/support.sql) on hand-worked answers, one rule each:
the credits (full 1, partial 0.5, none 0), an unlabelled citation counting as none, the best
citation of a sentence for recall, a sentence without a citation, an answer without any citation
(evaluated, 0, when its run and topic are labelled), an answer without sentences, and which
answers are evaluated at all."""

from __future__ import annotations

import json

import pytest

import evalstore

# (run, topic) -> sentences, each (citations); every answer cites the references d0, d1, d2
ANSWERS = {
    ("r1", "t1"): [[0, 1], [2], []],  # labelled: full, partial / none / no citation
    ("r1", "t2"): [[], []],  # no citation at all, in a labelled run and topic
    ("r1", "t3"): [[0]],  # t3 is labelled by nobody: not evaluated
    ("r2", "t1"): [],  # no sentence at all
    ("r2", "t2"): [[0, 1], [1]],  # partial, partial / unlabelled
    ("r3", "t1"): [[]],  # r3 has no label anywhere: not evaluated
    ("r4", "t1"): [[0]],  # r4 has no answer for t2
}
LABELS = [
    ("r1", "t1", 0, 0, "full"),
    ("r1", "t1", 0, 1, "partial"),
    ("r1", "t1", 1, 2, "none"),
    ("r2", "t2", 0, 0, "partial"),
    ("r2", "t2", 0, 1, "PS"),  # the track's abbreviation of partial support
    ("r4", "t1", 0, 0, "full_support"),
]
#: (run, topic) -> (precision, recall), worked by hand
EXPECTED = {
    ("r1", "t1"): ((1 + 0.5 + 0) / 3, (1 + 0 + 0) / 3),
    ("r1", "t2"): (0.0, 0.0),
    ("r2", "t1"): (0.0, 0.0),
    ("r2", "t2"): ((0.5 + 0.5 + 0) / 3, (0.5 + 0) / 2),
    ("r4", "t1"): (1.0, 1.0),
}


@pytest.fixture
def store(tmp_path):
    answers = [
        {"run_id": r, "topic_id": t, "references": ["d0", "d1", "d2"],
         "answer": [{"text": f"sentence {i}.", "citations": c} for i, c in enumerate(sentences)]}
        for (r, t), sentences in ANSWERS.items()
    ]  # fmt: skip
    labels = [{"run_id": r, "topic_id": t, "sentence": s, "citation": c, "label": x} for r, t, s, c, x in LABELS]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    s = evalstore.open(tmp_path / "s.duckdb")
    s.ingest_answers(tmp_path / "a.jsonl")
    s.ingest_support(tmp_path / "s.jsonl", name="sup")
    yield s
    s.close()


def test_precision_and_recall_on_hand_worked_answers(store):
    res = store.evaluate("sup", None, ["support_precision", "support_recall"])
    got = {(r, t, m): v for r, t, m, v in res.per_topic}
    assert {(r, t) for r, t, _ in got} == set(EXPECTED)  # r1/t3 (unlabelled topic) and r3 (unlabelled run) left out
    for (r, t), (precision, recall) in EXPECTED.items():
        assert got[(r, t, "support_precision")] == precision, (r, t)
        assert got[(r, t, "support_recall")] == recall, (r, t)
    assert any("r3" in n for n in res.notes)  # the run that shares nothing with the set, named


def test_complete_scores_a_labelled_topic_without_an_answer(store):
    res = store.evaluate("sup", ["r1", "r2", "r4"], ["support_recall"], complete=True, save=False)
    got = {(r, t): v for r, t, _, v in res.per_topic}
    assert got == {**{k: v[1] for k, v in EXPECTED.items()}, ("r4", "t2"): 0.0}


def test_the_stored_labels_name_the_cited_documents(store):
    rows = store.sql("SELECT run, topic, sentence, citation, doc, label FROM support_labels ORDER BY ALL").rows
    assert ("r2", "t2", 0, 1, "d1", "partial") in rows and ("r1", "t1", 1, 2, "d2", "none") in rows

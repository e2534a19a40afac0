"""``ingest support`` (evalstore.ingest.support): citation support labels of stored answers as a
qrels set of kind support; each label checked against the stored answer (run, topic, sentence,
citation, and the document when given), every bad line named, nothing half-written."""

from __future__ import annotations

import json

import pytest

from evalstore.errors import IngestError

ANSWER = {"run_id": "r1", "topic_id": "t1", "references": ["d0", "d1", "d2"],
          "answer": [{"text": "One.", "citations": [0, 2]}, {"text": "Two.", "citations": []}]}  # fmt: skip


def _label(sentence=0, citation=0, label="full", **extra) -> dict:
    return {"run_id": "r1", "topic_id": "t1", "sentence": sentence, "citation": citation, "label": label, **extra}


def _write(path, lines) -> str:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


@pytest.fixture
def answered(store, tmp_path):
    store.ingest_answers(_write(tmp_path / "a.jsonl", [ANSWER]))
    return store


def test_labels_are_a_qrels_set_of_kind_support(answered, tmp_path):
    path = _write(tmp_path / "support.gpt4o.jsonl", [_label(), _label(citation=2, label="NS", doc="d2")])
    r = answered.ingest_support(path)
    assert (r.kind, r.name, r.n_rows, r.n_topics) == ("support set", "support.gpt4o", 2, 1)
    assert answered.sql("SELECT name, kind, max_grade FROM qrels_sets").rows == [("support.gpt4o", "support", 2)]
    assert answered.sql("SELECT sentence, citation, doc, label, grade FROM support_labels ORDER BY ALL").rows == [
        (0, 0, "d0", "full", 2), (0, 2, "d2", "none", 0)]  # fmt: skip
    assert answered.ingest_support(path).status == "unchanged"


ERRORS = [
    (_label(run_id="r9"), "no run named 'r9' in the store (ingest its answers first"),
    (_label(topic_id="t9"), "the run 'r1' has no answer for topic 't9'"),
    (_label(sentence=2), "the answer of 'r1' for topic 't1' has 2 sentence(s) (0..1)"),
    (_label(citation=1), "sentence 0 cites references [0, 2]; citation 1 is not one of them"),
    (_label(sentence=1, citation=0), "sentence 1 cites references []; citation 0 is not one of them"),
    (_label(doc="d1"), "citation 0 names the document 'd0', not 'd1'"),
    (_label(label="maybe"), "the label is not full, partial or none"),
    (_label(sentence=-1), "sentence is not a whole number >= 0"),
    (_label(citation=-1), "citation is neither a whole number >= 0"),
    (_label(citation="d1"), "sentence 0 cites references [0, 2]; citation 1 is not one of them"),
    (_label(citation="d9"), "the document 'd9' is not among the references of the answer of 'r1' for topic 't1'"),
    ({"topic_id": "t1", "sentence": 0, "citation": 0, "label": "full"}, "no run_id"),
    (_label(citation=2), "the label of run, topic, sentence and citation r1, t1, 0, 2 is given twice (also line 1)"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "problem"), ERRORS, ids=[p for _, p in ERRORS])
def test_a_bad_label_is_named_and_nothing_is_stored(answered, tmp_path, line, problem):
    path = _write(tmp_path / "s.jsonl", [_label(citation=2), "", line])
    with pytest.raises(IngestError) as e:
        answered.ingest_support(path, name="s")
    assert problem in str(e.value) and (e.value.file, e.value.line) == (path, 3)
    assert answered.sql("SELECT count(*) FROM qrels_sets").rows == [(0,)]


def test_a_citation_given_as_its_document(answered, tmp_path):
    answered.ingest_support(_write(tmp_path / "s.jsonl", [_label(citation="d2", label="partial")]), name="s")
    assert answered.sql("SELECT sentence, citation, doc, label FROM support_labels").rows == [(0, 2, "d2", "partial")]


def test_standard_input_needs_a_name(cli, answered, tmp_path):
    db = answered.location
    answered.close()
    code, _, err = cli("ingest", "support", "-", "--db", db, stdin=json.dumps(_label()) + "\n")
    assert code != 0 and "name the support set with --name" in err
    code, _, err = cli("ingest", "support", "-", "--name", "s", "--db", db, stdin=json.dumps(_label()) + "\n")
    assert code == 0 and "support set 's' added" in err

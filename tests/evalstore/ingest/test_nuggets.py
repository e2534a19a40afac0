"""``ingest nuggets`` and ``ingest assignments`` (evalstore.ingest.nuggets): nuggetizer's nugget
and assignment files as a nugget set and an assignment set (a qrels set of kind nuggets); every bad
line named with its file, line, text and expectation, nothing half-written; an assignment matched
to its nugget by topic and text; identity by content (with the nugget set's), replace and drop."""

from __future__ import annotations

import json

import pytest

from evalstore.errors import IngestError, StoreError

NUGGETS = [
    {"qid": "t1", "query": "what is x", "nuggets": [{"text": "x is a", "importance": "vital"},
                                                    {"text": "x is b", "importance": "okay"}]},
    {"qid": "t2", "query": "what is y", "nuggets": []},
]  # fmt: skip


def _assigned(run="r1", topic="t1", labels=("support", "not_support")) -> dict:
    texts = [n for q in NUGGETS if q["qid"] == topic for n in q["nuggets"]]
    return {"qid": topic, "run_id": run, "nuggets": [dict(n, assignment=a) for n, a in zip(texts, labels)]}


def _write(path, lines) -> str:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


@pytest.fixture
def nuggets(store, tmp_path):
    store.ingest_nuggets(_write(tmp_path / "nuggets.v1.jsonl", NUGGETS))
    return store


def test_a_nugget_set_is_named_after_its_file_and_stored_once(nuggets, tmp_path):
    assert nuggets.sql("SELECT name, n_topics, n_nuggets, n_vital FROM nugget_sets").rows == [("nuggets.v1", 2, 2, 1)]
    assert nuggets.sql("SELECT topic, nugget, text, importance, query FROM nuggets ORDER BY ALL").rows == [
        ("t1", 0, "x is a", "vital", "what is x"), ("t1", 1, "x is b", "okay", "what is x")]  # fmt: skip
    again = nuggets.ingest_nuggets(_write(tmp_path / "nuggets.v1.jsonl", NUGGETS))
    assert again.status == "unchanged"


NUGGET_ERRORS = [
    ('{"query": "q", "nuggets": []}', "no qid"),
    ('{"qid": "t9", "nuggets": {"text": "a"}}', "no nuggets"),
    ('{"qid": "t9", "nuggets": [{"importance": "vital"}]}', 'not an object with a non-empty "text"'),
    ('{"qid": "t9", "nuggets": [{"text": "a", "importance": "high"}]}', "importance is not vital or okay"),
    ('{"qid": "t9", "nuggets": [{"text": "a"}]}', "importance is not vital or okay"),
    ('{"qid": "t1", "nuggets": []}', "the topic t1 is given twice (also line 1)"),
    ('{"qid": "t9", "nuggets": [{"text": "a", "importance": "okay"}, {"text": "a", "importance": "vital"}]}',
     "the nugget of topic and text t9, a is given twice"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "problem"), NUGGET_ERRORS, ids=[p for _, p in NUGGET_ERRORS])
def test_a_bad_nugget_line_is_named(store, tmp_path, text, problem):
    path = _write(tmp_path / "n.jsonl", [*map(json.dumps, NUGGETS), text])
    with pytest.raises(IngestError) as e:
        store.ingest_nuggets(path)
    assert problem in str(e.value) and (e.value.file, e.value.line, e.value.text) == (path, 3, text)
    assert store.sql("SELECT count(*) FROM nugget_sets").rows == [(0,)]


def test_assignments_are_a_qrels_set_of_kind_nuggets(nuggets, tmp_path):
    lines = [_assigned(), _assigned(run="r2", labels=("partial_support",)), _assigned(topic="t2", labels=())]
    r = nuggets.ingest_assignments(_write(tmp_path / "manual.jsonl", lines), nuggets="nuggets.v1")
    assert (r.kind, r.name, r.status, r.n_rows, r.n_topics) == ("assignment set", "manual", "added", 3, 2)
    assert any("only some of their topic's nuggets" in m for m in r.messages)  # r2 was assigned one of two
    assert nuggets.sql("SELECT kind, nuggets, max_grade FROM qrels_sets").rows == [("nuggets", "nuggets.v1", 2)]
    assert nuggets.sql("SELECT run, topic, text, importance, assignment, grade FROM nugget_assignments "
                       "ORDER BY ALL").rows == [  # fmt: skip
        ("r1", "t1", "x is a", "vital", "support", 2), ("r1", "t1", "x is b", "okay", "not_support", 0),
        ("r2", "t1", "x is a", "vital", "partial_support", 1)]  # fmt: skip
    again = nuggets.ingest_assignments(_write(tmp_path / "manual.jsonl", lines), nuggets="nuggets.v1")
    assert again.status == "unchanged"


ASSIGN_ERRORS = [
    (_assigned(topic="t7"), "the topic 't7' has no nuggets in the nugget set 'nuggets.v1'"),
    ({"qid": "t1", "run_id": "r1", "nuggets": [{"text": "x is c", "assignment": "support"}]},
     "'x is c' is not a nugget of topic 't1'"),
    ({"qid": "t1", "run_id": "r1", "nuggets": [{"text": "x is a", "importance": "okay", "assignment": "support"}]},
     "the nugget 'x is a' is okay here but vital in the nugget set"),
    (_assigned(labels=("supported", "support")), "assignment is not support, partial_support or not_support"),
    ({"qid": "t1", "nuggets": []}, "no run_id"),
    ({"qid": "t1", "run_id": "r1", "nuggets": [{"text": "x is a", "assignment": "support"},
                                                {"text": "x is a", "assignment": "not_support"}]},
     "the nugget assigned to run, topic and text r1, t1, x is a is given twice"),
    (_assigned(run="r0"), "the answer of run and topic r0, t1 is given twice (also line 1)"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "problem"), ASSIGN_ERRORS, ids=[p for _, p in ASSIGN_ERRORS])
def test_a_bad_assignment_is_named_and_nothing_is_stored(nuggets, tmp_path, line, problem):
    path = _write(tmp_path / "a.jsonl", [_assigned(run="r0"), _assigned(run="ok"), line])
    with pytest.raises(IngestError) as e:
        nuggets.ingest_assignments(path, nuggets="nuggets.v1", name="a")
    assert problem in str(e.value) and (e.value.file, e.value.line) == (path, 3)
    assert nuggets.sql("SELECT count(*) FROM qrels_sets").rows == [(0,)]


def test_partial_support_spellings_are_read(nuggets, tmp_path):
    nuggets.ingest_assignments(_write(tmp_path / "a.jsonl", [_assigned(labels=("Partial Support", "not-support"))]),
                               nuggets="nuggets.v1")  # fmt: skip
    assert nuggets.sql("SELECT assignment FROM nugget_assignments ORDER BY nugget").rows == [
        ("partial_support",), ("not_support",)]  # fmt: skip


def test_the_nugget_set_is_part_of_the_assignments_identity(nuggets, tmp_path):
    path = _write(tmp_path / "a.jsonl", [_assigned()])
    nuggets.ingest_assignments(path, nuggets="nuggets.v1", name="a")
    nuggets.ingest_nuggets(_write(tmp_path / "v2.jsonl", [*NUGGETS, {"qid": "t3", "nuggets": []}]), name="v2")
    with pytest.raises(IngestError, match="already exists with different content"):
        nuggets.ingest_assignments(path, nuggets="v2", name="a")
    assert nuggets.ingest_assignments(path, nuggets="v2", name="a", replace=True).status == "replaced"
    assert nuggets.sql("SELECT nuggets FROM qrels_sets").rows == [("v2",)]


def test_a_nugget_set_in_use_is_neither_replaced_nor_dropped(nuggets, tmp_path):
    nuggets.ingest_assignments(_write(tmp_path / "a.jsonl", [_assigned()]), nuggets="nuggets.v1", name="a")
    with pytest.raises(IngestError, match=r"the assignment set\(s\) a match their nuggets"):
        nuggets.ingest_nuggets(_write(tmp_path / "nuggets.v1.jsonl", NUGGETS[:1]), replace=True)
    with pytest.raises(StoreError, match=r"assign the nuggets of this nugget set: drop them first"):
        nuggets.drop_nuggets("nuggets.v1")
    nuggets.drop_qrels("a")
    assert nuggets.sql("SELECT count(*) FROM nugget_assignments").rows == [(0,)]
    nuggets.drop_nuggets("nuggets.v1")
    assert nuggets.sql("SELECT count(*) FROM nuggets").rows == [(0,)]


def test_an_unknown_nugget_set_gets_the_closest_names(nuggets, tmp_path):
    with pytest.raises(Exception, match=r"no nugget set named 'nuggets\.v2'.*did you mean"):
        nuggets.ingest_assignments(_write(tmp_path / "a.jsonl", [_assigned()]), nuggets="nuggets.v2")

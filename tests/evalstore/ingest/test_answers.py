"""``ingest answers`` (evalstore.ingest.answers): TREC RAG answers and nuggetizer's answers form as
runs of unit answers, from files, gzip and standard input; every bad line named with its file,
line, text and what was expected, nothing half-written; identity by content, replace and drop as
for runs; the references are the run's ranked list, evaluated by the ordinary metrics."""

from __future__ import annotations

import gzip
import json

import pytest

from evalstore.errors import IngestError


def _line(run="r1", topic="t1", refs=("d1", "d2", "d3"), sentences=None, **extra) -> dict:
    sentences = sentences if sentences is not None else [
        {"text": "The first sentence.", "citations": [0, 2]}, {"text": "A second one.", "citations": []}]  # fmt: skip
    return {"run_id": run, "topic_id": topic, "references": list(refs), "answer": sentences, **extra}


def _write(path, lines) -> str:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


def test_answers_are_runs_whose_ranked_list_is_their_references(store, tmp_path):
    one = [{"text": "Only one.", "citations": [0]}]
    path = _write(tmp_path / "a.jsonl", [_line(), _line(topic="t2", refs=["d9"], sentences=one),
                                         _line(run="r2", refs=[], sentences=[])])  # fmt: skip
    [r1, r2] = store.ingest_answers(path)
    assert (r1.name, r1.status, r1.n_rows, r1.n_topics) == ("r1", "added", 4, 2)
    assert (r2.name, r2.n_rows, r2.n_topics) == ("r2", 0, 1)
    assert store.sql("SELECT name, unit, format FROM runs ORDER BY name").rows == [
        ("r1", "answers", "trec-rag"), ("r2", "answers", "trec-rag")]  # fmt: skip
    assert store.sql("SELECT topic, doc, rank FROM run_rows WHERE run = 'r1' ORDER BY topic, rank").rows == [
        ("t1", "d1", 1), ("t1", "d2", 2), ("t1", "d3", 3), ("t2", "d9", 1)]  # fmt: skip
    sentences = store.sql("SELECT sentence, text, citations, cited_docs FROM answer_sentences "
                          "WHERE run = 'r1' AND topic = 't1' ORDER BY sentence").rows  # fmt: skip
    assert sentences == [(0, "The first sentence.", [0, 2], ["d1", "d3"]), (1, "A second one.", [], [])]
    # response_length: given, else the words of the sentences
    assert store.sql("SELECT response_length, length_given FROM answers WHERE run = 'r1' AND topic = 't1'").rows == [
        (6, False)]  # fmt: skip


def test_the_references_are_evaluated_as_a_ranked_list(store, tmp_path):
    store.ingest_answers(_write(tmp_path / "a.jsonl", [_line(refs=["d1", "d2", "d3"])]))
    store.ingest_run(_write(tmp_path / "run.txt", ["t1 Q0 d1 1 3 same", "t1 Q0 d2 2 2 same", "t1 Q0 d3 3 1 same"]))
    store.ingest_qrels(_write(tmp_path / "q.txt", ["t1 0 d2 2", "t1 0 d3 1", "t1 0 d4 1"]), name="q")
    res = store.evaluate("q", None, ["nDCG@2", "AP", "RR"])
    by_run = {(r, m): v for r, _, m, v in res.per_topic}
    for m in ("nDCG@2", "AP", "RR"):  # the answer cites d1, d2, d3 in this order, as the run ranks them
        assert by_run[("r1", m)] == by_run[("same", m)], m
    assert by_run[("r1", "RR")] == 0.5


def test_nuggetizers_answers_form_needs_a_run_name(store, tmp_path):
    path = _write(tmp_path / "n.jsonl", [{"topic_id": "t1", "answer": [{"text": "Some text."}]}])
    with pytest.raises(IngestError, match="no run_id") as e:
        store.ingest_answers(path)
    assert e.value.line == 1
    [r] = store.ingest_answers(path, run="gpt")
    assert (r.name, r.n_rows, r.n_topics) == ("gpt", 0, 1)
    assert store.sql("SELECT citations FROM answer_sentences").rows == [([],)]


def test_run_names_the_one_run_of_the_call(store, tmp_path):
    path = _write(tmp_path / "two.jsonl", [_line(run="a"), _line(run="b", topic="t2")])
    with pytest.raises(IngestError, match="--run 'x' names one run, but the input holds the runs a, b"):
        store.ingest_answers(path, run="x")
    [r] = store.ingest_answers(_write(tmp_path / "one.jsonl", [_line(run="a")]), run="renamed")
    assert r.name == "renamed"


def test_trec_rag_2025_ids_under_metadata(store, tmp_path):
    line = {"metadata": {"run_id": "m1", "narrative_id": "17", "narrative": "long question"}, "references": ["d"],
            "answer": [{"text": "x", "citations": [0]}]}  # fmt: skip
    store.ingest_answers(_write(tmp_path / "m.jsonl", [line]))
    assert store.sql("SELECT run, topic, query FROM answers").rows == [("m1", "17", "long question")]


def test_gzip_and_standard_input_have_one_identity(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    text = json.dumps(_line()) + "\n"
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    code, _, err = cli("ingest", "answers", tmp_path / "a.jsonl.gz", "--db", db)
    assert code == 0 and "run 'r1' added" in err
    code, _, err = cli("ingest", "answers", "-", "--db", db, stdin=text)
    assert code == 0 and "identical content" in err


BAD = [
    ("not json", "not a JSON object"),
    ('{"run_id": "r", "topic_id": "t"}', "no answer"),
    ('{"run_id": "r", "answer": []}', "no topic_id"),
    ('{"run_id": "r", "topic_id": "t", "answer": [{"citations": [0]}]}', 'not an object with a "text" string'),
    ('{"run_id": "r", "topic_id": "t", "references": ["a"], "answer": [{"text": "x", "citations": ["0"]}]}',
     "citations are not a list of whole numbers"),
    ('{"run_id": "r", "topic_id": "t", "references": ["a"], "answer": [{"text": "x", "citations": [-1]}]}',
     "citations are not a list of whole numbers"),
    ('{"run_id": "r", "topic_id": "t", "references": ["a", "b"], "answer": [{"text": "x", "citations": []}, '
     '{"text": "y", "citations": [2]}]}', "sentence 1 cites reference 2, but the answer has 2 references (0..1)"),
    ('{"run_id": "r", "topic_id": "t", "references": ["a", "a"], "answer": []}', "'a' is listed twice in references"),
    ('{"run_id": "r", "topic_id": "t", "references": ["a"], "answer": [{"text": "x", "citations": [0, 0]}]}',
     "sentence 0 cites reference 0 twice"),
    ('{"run_id": "r", "topic_id": "t", "references": [1], "answer": []}', "references are not a list of document"),
    ('{"run_id": "r", "topic_id": "t", "response_length": -3, "answer": []}', "response_length is not a whole"),
    ('{"run_id": "r\\u0001", "topic_id": "t", "answer": []}', "control character"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "problem"), BAD, ids=[p for _, p in BAD])
def test_a_bad_line_is_named_and_nothing_is_stored(store, tmp_path, text, problem):
    path = _write(tmp_path / "bad.jsonl", [_line(run="good"), "", text])
    with pytest.raises(IngestError) as e:
        store.ingest_answers(path)
    assert problem in str(e.value)
    assert (e.value.file, e.value.line, e.value.text) == (path, 3, text)
    assert "one answer per line" in (e.value.expected or "")
    assert store.sql("SELECT count(*) FROM runs").rows == [(0,)]
    assert store.sql("SELECT count(*) FROM answers").rows == [(0,)]


def test_a_json_array_and_a_repeated_answer_are_refused(store, tmp_path):
    with pytest.raises(IngestError, match="a JSON array, not JSON lines"):
        store.ingest_answers(_write(tmp_path / "arr.json", [json.dumps([_line()])]))
    with pytest.raises(IngestError, match=r"the answer of run and topic r1, t1 is given twice \(also line 1\)") as e:
        store.ingest_answers(_write(tmp_path / "twice.jsonl", [_line(), _line(topic="t2"), _line()]))
    assert e.value.line == 3


def test_identity_replace_and_drop_are_those_of_runs(store, tmp_path):
    path = _write(tmp_path / "a.jsonl", [_line()])
    assert store.ingest_answers(path)[0].status == "added"
    assert store.ingest_answers(path)[0].status == "unchanged"
    other = _write(tmp_path / "b.jsonl", [_line(refs=["d1", "d2", "d3", "d4"])])
    with pytest.raises(IngestError, match="already exists with different content"):
        store.ingest_answers(other)
    store.ingest_qrels(_write(tmp_path / "q.txt", ["t1 0 d1 1"]), name="q")
    store.evaluate("q", None, ["P@1"])
    [r] = store.ingest_answers(other, replace=True)
    assert r.status == "replaced"
    assert store.sql("SELECT count(*) FROM scores").rows == [(0,)]  # the old content's scores are gone
    assert store.sql("SELECT n_references FROM answers").rows == [(4,)]
    store.drop_runs("r1")
    for view in ("runs", "answers", "answer_sentences", "run_rows"):
        assert store.sql(f"SELECT count(*) FROM {view}").rows == [(0,)], view


def test_a_ranked_run_replaced_by_answers_changes_unit(store, tmp_path):
    store.ingest_run(_write(tmp_path / "run.txt", ["t1 Q0 d1 1 3 r1"]))
    store.ingest_answers(_write(tmp_path / "a.jsonl", [_line()]), replace=True)
    assert store.sql("SELECT unit FROM runs").rows == [("answers",)]
    store.ingest_run(tmp_path / "run.txt", replace=True)
    assert store.sql("SELECT unit FROM runs").rows == [("ranking",)]
    assert store.sql("SELECT count(*) FROM answers").rows == [(0,)]

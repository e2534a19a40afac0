"""`ingest topics` / `ingest docs` (evalstore.ingest.texts): every format, the field choice, errors with
file, line, text and expectation, one transaction, identity by content, chunked reading, drop."""

from __future__ import annotations

import gzip
import json

import pytest
from support import DATA_DIR, need_shared

import evalstore
from evalstore.errors import IngestError, NotFoundError
from evalstore.ingest import texts

SGML = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international
criminal activity.

<narr> Narrative:
A relevant document must identify the organization &amp; its activity.
</top>

<top>
<num> Number: 302 <title> Poliomyelitis and Post-Polio </title>
<desc> Description: Is the disease coming back?
<narr> Narrative: Relevant documents describe cases.
</top>
"""

XML = """<webtrack2009>
<topic number="1" type="faceted">
  <query>obama family tree</query>
  <description>Find information on President Barack Obama's family history.</description>
  <subtopic number="1" type="nav">Find the TIME magazine photo essay.</subtopic>
</topic>
<topic number="2" type="ambiguous">
  <query>french lick resort &amp; casino</query>
  <description>Find information on the resort.</description>
</topic>
</webtrack2009>
"""


def _topics(store, name):
    return store.sql(
        "SELECT topic, query, title, description, narrative FROM topics WHERE topics = ? ORDER BY line_no", [name]
    ).rows


def test_trec_sgml_topics_and_the_field_choice(store, tmp_path):
    path = tmp_path / "topics.301-302.txt"
    path.write_text(SGML)
    r = store.ingest_topics(path)
    assert (r.name, r.status, r.format, r.count) == ("topics.301-302", "added", "trec", 2)
    rows = _topics(store, "topics.301-302")
    assert rows[0] == (
        "301",
        "International Organized Crime",
        "International Organized Crime",
        "Identify organizations that participate in international criminal activity.",
        "A relevant document must identify the organization & its activity.",
    )
    assert rows[1][:2] == ("302", "Poliomyelitis and Post-Polio")  # closing tags, labels on one line
    store.ingest_topics(path, name="desc", field="description")
    assert [q for _, q, *_ in _topics(store, "desc")] == [
        "Identify organizations that participate in international criminal activity.",
        "Is the disease coming back?",
    ]


def test_trec_xml_topics(store, tmp_path):
    path = tmp_path / "wt09.topics.xml"
    path.write_text(XML)
    store.ingest_topics(path, name="wt09")
    rows = _topics(store, "wt09")
    assert rows == [
        (
            "1",
            "obama family tree",
            "obama family tree",
            "Find information on President Barack Obama's family history.",
            None,
        ),
        ("2", "french lick resort & casino", "french lick resort & casino", "Find information on the resort.", None),
    ]
    with pytest.raises(IngestError) as e:  # no narrative in these topics
        store.ingest_topics(path, name="wt09n", field="narrative")
    assert e.value.line == 2 and "has no narrative" in str(e.value) and "--field" in e.value.expected


def test_msmarco_tsv_and_jsonl_topics(store, tmp_path):
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("19335\tanthropological definition of environment\n\n47923\taxon terminals\tor synaptic knob\n")
    r = store.ingest_topics(tsv)
    assert r.format == "tsv" and r.name == f"{tmp_path.name}-queries"  # a generic name: after its folder too
    assert [r[:2] for r in _topics(store, r.name)] == [
        ("19335", "anthropological definition of environment"),
        ("47923", "axon terminals\tor synaptic knob"),  # everything after the first tab
    ]
    jl = tmp_path / "q.jsonl"
    lines = [
        {"query_id": "1", "text": "what is rba"},  # ir_datasets
        {"_id": "2", "text": "the q", "metadata": {}},  # BEIR
        {"qid": 3, "query": "numeric id", "description": "longer"},
    ]
    jl.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    store.ingest_topics(jl, name="jl")
    assert [r[:4] for r in _topics(store, "jl")] == [
        ("1", "what is rba", "what is rba", None),
        ("2", "the q", "the q", None),
        ("3", "numeric id", "numeric id", "longer"),
    ]


@pytest.mark.parametrize(
    "content, fmt, line, problem",
    [
        ("1\tok\n2 no tab here\n", "tsv", 2, "no tab after the topic id"),
        ('{"qid": "1", "text": "a"}\n{"qid": "2", "text": \n', "jsonl", 2, "not a JSON object"),
        ('{"qid": "1", "text": "a"}\n{"text": "b"}\n', "jsonl", 2, "no topic id"),
        ('{"qid": "1", "text": 5}\n', "jsonl", 1, "no text"),
        ("1\ta\n2\tb\n1\tc\n", "tsv", 3, "given twice (lines 1 and 3)"),
        ("<top>\n<title> no number\n</top>\n", "trec", 1, "without a topic number"),
    ],
)
def test_topic_errors_name_file_line_text_and_expectation(store, tmp_path, content, fmt, line, problem):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(IngestError) as e:
        store.ingest_topics(path, format=fmt)
    err = e.value
    assert err.file == str(path) and err.line == line and problem in str(err)
    assert err.text and err.expected
    # one transaction: nothing of the failed call is stored
    assert store.sql("SELECT count(*) FROM topic_sets").rows == [(0,)]
    assert store.sql("SELECT count(*) FROM topics").rows == [(0,)]


def test_identity_by_content_and_replace(store, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("1\tone\n2\ttwo\n")
    assert store.ingest_topics(path).status == "added"
    gz = tmp_path / "q.tsv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert store.ingest_topics(gz, name="q").status == "unchanged"  # same content, read from gzip
    path.write_text("1\tone\n2\tTWO\n")
    with pytest.raises(IngestError, match="already stored with other content.*\n.*\n?.*--replace"):
        store.ingest_topics(path)
    assert store.ingest_topics(path, replace=True).status == "replaced"
    assert store.sql("SELECT query FROM topics WHERE topic = '2'").rows == [("TWO",)]


def test_the_default_name_says_which_collection(store, tmp_path):
    """A set is named after its file; a generic file name (the topics.tsv of TREC DL 2019 and of
    2020) after its folder too, so that both years' topics get names of their own (issue 44.6)."""
    for year in ("2019", "2020"):
        (tmp_path / f"trec-dl-{year}").mkdir()
        (tmp_path / f"trec-dl-{year}" / "topics.tsv").write_text(f"{year}\tquery of {year}\n")
        assert store.ingest_topics(tmp_path / f"trec-dl-{year}" / "topics.tsv").name == f"trec-dl-{year}-topics"
    (tmp_path / "dl19-queries.tsv.gz").write_bytes(gzip.compress(b"1\tq\n"))
    assert store.ingest_topics(tmp_path / "dl19-queries.tsv.gz").name == "dl19-queries"
    assert texts.default_name(tmp_path / "trec-dl-2019" / "Collection.jsonl") == "trec-dl-2019-Collection"


def test_docs_in_bounded_chunks(store, tmp_path, monkeypatch):
    monkeypatch.setattr(texts, "CHUNK_BYTES", 64)  # many chunks: line numbers run on across them
    path = tmp_path / "collection.tsv"
    docs = [(f"d{i}", f"passage {i}\twith a tab, kept  as given ") for i in range(50)]
    path.write_text("".join(f"{d}\t{t}\r\n" for d, t in docs))
    r = store.ingest_docs(path)
    assert (r.name, r.count, r.format) == (f"{tmp_path.name}-collection", 50, "tsv")
    rows = store.sql("SELECT doc, text, line_no FROM docs ORDER BY line_no").rows
    assert rows == [(d, t, i + 1) for i, (d, t) in enumerate(docs)]
    # a duplicate in a later chunk names both lines, and nothing is stored
    path.write_text("".join(f"{d}\t{t}\n" for d, t in docs) + "d3\tagain\n")
    with pytest.raises(IngestError) as e:
        store.ingest_docs(path, name="dup")
    assert e.value.line == 51 and "'d3' is given twice (lines 4 and 51)" in str(e.value)
    assert store.sql("SELECT count(*) FROM doc_sets WHERE name = 'dup'").rows == [(0,)]


def test_docs_jsonl_beir_with_title(store, tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        json.dumps({"_id": "MED-10", "title": "Statin use", "text": "Recent studies...", "metadata": {}})
        + "\n"
        + json.dumps({"docid": "7", "contents": "msmarco style"})
        + "\n"
    )
    store.ingest_docs(path)
    assert store.sql("SELECT doc, title, text FROM docs ORDER BY line_no").rows == [
        ("MED-10", "Statin use", "Recent studies..."),
        ("7", None, "msmarco style"),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"docid": "1", "text": "ok"}\n{"docid": "2", "text": "\xff"}\n')
    with pytest.raises(IngestError, match="not UTF-8") as e:
        store.ingest_docs(bad)
    assert e.value.line == 2


def test_drop_removes_the_texts(store, tmp_path):
    (tmp_path / "q.tsv").write_text("1\tone\n")
    (tmp_path / "d.tsv").write_text("a\tdoc a\n")
    store.ingest_topics(tmp_path / "q.tsv")
    store.ingest_docs(tmp_path / "d.tsv")
    plan = store.drop_topics("q")
    assert plan.rows == 1 and "1 topic set (q), 1 topics" in plan.summary()
    store.drop_docs(["d"])
    for view in ("topics", "docs", "topic_sets", "doc_sets"):
        assert store.sql(f"SELECT count(*) FROM {view}").rows == [(0,)]
    store.ingest_topics(tmp_path / "q.tsv", name="queries")
    with pytest.raises(NotFoundError, match="did you mean 'queries'"):
        store.drop_topics("querie")


def test_cli_ingest_topics_docs_and_drop(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    (tmp_path / "q.xml").write_text(SGML)
    code, out, err = cli("ingest", "topics", tmp_path / "q.xml", "--field", "description", "--db", db)
    assert code == 0 and "topic set 'q' added: 2 topics (trec, query text: description)" in err
    (tmp_path / "c.tsv").write_text("a\ttext a\n")
    code, out, err = cli("ingest", "docs", tmp_path / "c.tsv", "--db", db)
    assert code == 0 and "doc set 'c' added: 1 documents" in err
    code, out, err = cli("ingest", "docs", "-", "--db", db, stdin="x\tno name\n")
    assert code != 0 and "--name" in err
    code, out, err = cli("ingest", "docs", "-", "--name", "piped", "--db", db, stdin="x\tpiped text\n")
    assert code == 0
    code, out, err = cli("drop", "docs", "c", "--yes", "--db", db)
    assert code == 0 and "dropped 1 doc set (c), 1 documents" in err
    with evalstore.open(db, read_only=True) as s:
        assert s.sql("SELECT docs, doc, text FROM docs").rows == [("piped", "x", "piped text")]


@pytest.mark.shared
def test_trec_dl_2019_topics_from_shared():
    path = need_shared(DATA_DIR / "trec-dl-2019-passage" / "topics.tsv")
    with evalstore.open(":memory:") as s:
        r = s.ingest_topics(path, name="dl19")
        assert r.count == 43
        assert s.sql("SELECT query FROM topics WHERE topic = '19335'").rows == [
            ("anthropological definition of environment",)
        ]

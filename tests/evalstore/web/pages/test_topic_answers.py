"""The generated answers of a topic page (evalstore.web.pages.topic_answers), on the RAG sample: the
nuggets with their importance and each answer's assignments, the answers with their citations
marked by their support labels, the references with their grades under relevance judgments, the
labels of another set named and linked; the leaderboard and compare pages of nugget metrics; a
hostile run name stays text."""

from __future__ import annotations

import html
import json
import re

import pytest
from webfixtures import client_of

import evalstore


@pytest.fixture
def rag_pages(rag_db):
    """The RAG sample evaluated: ``(get, sql)``, a page by its address and a query's rows (each
    opens its own connection: the pages' read-only one and a store's are not open at once)."""
    with evalstore.open(rag_db) as s:
        s.evaluate("manual", None, ["strict_vital", "vital"])
        s.evaluate("support.manual", None, ["support_precision"])
        s.evaluate("qrels", None, ["nDCG@10"])

    def get(url: str):
        with client_of(rag_db) as c:
            return c.get(url)

    def sql(query: str) -> list[tuple]:
        with evalstore.open(rag_db, read_only=True) as s:
            return s.sql(query).rows

    return get, sql


def _cells(page: str, table: str) -> list[list[str]]:
    body = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:]
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in rows]  # fmt: skip


def test_the_topic_page_of_an_assignment_set(rag_pages):
    get, sql = rag_pages
    page = get("/topics/R001?qrels=manual&metric=vital&runs=rag03,rag01").text
    nuggets = sql("SELECT text, importance FROM nuggets WHERE topic = 'R001'")
    rows = _cells(page, "nuggets")
    assert sorted((r[1], r[2]) for r in rows) == sorted(nuggets)
    assert [r[2] for r in rows] == sorted((r[2] for r in rows), key=lambda i: i != "vital")  # vital first
    labels = dict(sql("SELECT text, assignment FROM nugget_assignments WHERE qrels = 'manual' AND run = 'rag03' "
                      "AND topic = 'R001'"))  # fmt: skip
    shown = {"support": "supported", "partial_support": "partial", "not_support": "not"}
    assert {r[1]: r[3] for r in rows} == {t: shown[a] for t, a in labels.items()}
    sentences = sql("SELECT text FROM answer_sentences WHERE run = 'rag03' AND topic = 'R001' ORDER BY sentence")
    answer = page.split('id="answer-1"', 1)[1].split("</div>", 1)[0]
    shown_sentences = [
        html.unescape(re.sub(r"<[^>]+>|\s*\[\d+\]", "", p)).strip()
        for p in re.findall(r'<p class="sentence">(.*?)</p>', answer, re.S)
    ]
    assert shown_sentences == [s for (s,) in sentences]
    # each citation marked with its label in the support set the page names
    assert "support labels of <a href=" in page and "support.manual" in page
    full = sql("SELECT sentence, citation FROM support_labels WHERE qrels = 'support.manual' AND run = 'rag03' "
               "AND topic = 'R001' AND label = 'full'")  # fmt: skip
    assert answer.count("cite s-full") == len(full)
    refs = sql("SELECT count(*) FROM run_rows WHERE run = 'rag03' AND topic = 'R001'")[0][0]
    assert len(_cells(page, "references-1")) == refs
    assert 'id="list-1"' not in page  # no ranked list against nugget assignments: the answer's references instead


def test_under_relevance_judgments_the_references_carry_their_grades(rag_pages):
    get, _ = rag_pages
    page = get("/topics/R001?qrels=qrels&metric=nDCG@10&runs=rag03").text
    assert 'id="list-1"' in page and "the answers&#39; references" in page  # the ranked list of what it cites
    assert 'id="nuggets"' in page and "assigned to each answer in <a href=" in page  # the nuggets, linked
    assert "grade" in page.split('id="references-1"', 1)[1].split("</thead>", 1)[0]


def test_leaderboard_and_compare_of_a_nugget_metric(rag_pages):
    get, sql = rag_pages
    page = get("/?qrels=manual&metric=strict_vital").text
    board = dict(sql("SELECT run, mean FROM leaderboard WHERE qrels = 'manual' AND metric = 'strict_vital'"))
    rows = _cells(page, "leaderboard")
    assert {r[1] for r in rows} == set(board)
    page = get("/compare?baseline=rag01&run=rag05&qrels=manual&metric=vital")
    assert page.status_code == 200 and "rag05" in page.text


def test_a_topic_page_without_answers_is_unchanged(client):
    page = client.get("/topics/S01").text
    assert 'id="list-1"' in page and 'id="nuggets"' not in page and "Answers</h2>" not in page


def test_hostile_names_in_answers_stay_text(rag_db, tmp_path):
    evil = '<script>alert("x")</script>'
    line = {"run_id": evil, "topic_id": "R001", "references": [evil], "answer": [{"text": evil, "citations": [0]}]}
    (tmp_path / "evil.jsonl").write_text(json.dumps(line) + "\n")
    with evalstore.open(rag_db) as s:
        s.ingest_answers(tmp_path / "evil.jsonl")
        s.evaluate("qrels", None, ["P@1"])
    with client_of(rag_db) as c:
        page = c.get("/topics/R001", params={"qrels": "qrels", "metric": "P@1", "runs": evil}).text
    assert evil not in page and "&lt;script&gt;alert(" in page


def test_the_static_report_of_an_assignment_set(rag_pages, rag_db, tmp_path):
    from evalstore.web.static_site import write_report

    with evalstore.open(rag_db, read_only=True) as s:
        done = write_report(s, tmp_path / "report", "manual", ["vital", "strict_vital"])
    assert done.topics == 8
    page = (tmp_path / "report" / "topics" / "R001.html").read_text()
    assert 'id="nuggets"' in page and 'id="answer-1"' in page and 'id="answer-2"' in page
    assert (tmp_path / "report" / "contrast").is_dir()  # where the best two answers' references differ

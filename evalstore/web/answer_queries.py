"""What the topic page reads of generated answers: bound SQL over the documented views ``answers``,
``answer_sentences``, ``run_rows``, ``nuggets``, ``nugget_assignments``, ``support_labels`` and
``qrels_sets`` (migration 0017). Every value reaches SQL as a parameter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store


@dataclass
class Sentence:
    index: int  # 0-based, as the answer gives it
    text: str
    citations: list[int]  # 0-based indexes into the references


@dataclass
class Answer:
    run: str
    query: str | None
    response_length: int
    length_given: bool
    references: list[str]  # in order: reference i is run_rows rank i + 1
    sentences: list[Sentence] = field(default_factory=list)


def kind_of(store: Store, qrels: str) -> tuple[str, str | None]:
    """``(kind, nugget set)`` of a judged set: 'judgments', 'nuggets' (with its nugget set) or 'support'."""
    rows = store.con.execute("SELECT kind, nuggets FROM qrels_sets WHERE name = ?", [qrels]).fetchall()
    return (str(rows[0][0] or "judgments"), rows[0][1]) if rows else ("judgments", None)


def answers_of(store: Store, runs: Sequence[str], topic: str) -> dict[str, Answer]:
    """``{run: answer}`` of the runs that answer ``topic`` (runs of kind answers), with their
    sentences, citations and references."""
    con = store.con
    heads = con.execute(
        "SELECT run, query, response_length, length_given FROM answers "
        "WHERE topic = $topic AND list_contains($runs, run)",
        {"topic": topic, "runs": list(runs)},
    ).fetchall()
    if not heads:
        return {}
    refs: dict[str, list[str]] = {}
    for run, doc in con.execute(
        "SELECT run, doc FROM run_rows WHERE topic = $topic AND list_contains($runs, run) ORDER BY run, rank",
        {"topic": topic, "runs": [h[0] for h in heads]},
    ).fetchall():
        refs.setdefault(run, []).append(doc)
    out = {r: Answer(r, query, int(n), bool(given), refs.get(r, [])) for r, query, n, given in heads}
    for run, i, text, cites in con.execute(
        "SELECT run, sentence, text, citations FROM answer_sentences WHERE topic = $topic "
        "AND list_contains($runs, run) ORDER BY run, sentence",
        {"topic": topic, "runs": list(out)},
    ).fetchall():
        out[run].sentences.append(Sentence(int(i), text, [int(c) for c in cites]))
    return out


def judged_sets(store: Store, kind: str, runs: Sequence[str], topic: str) -> list[str]:
    """The sets of ``kind`` ('nuggets' or 'support') that judge an answer of ``runs`` on ``topic``,
    by name: those whose labels a page can show beside another set's scores."""
    view = {"nuggets": "nugget_assignments", "support": "support_labels"}[kind]
    rows = store.con.execute(
        f"SELECT DISTINCT qrels FROM {view} WHERE topic = $topic AND list_contains($runs, run) ORDER BY qrels",
        {"topic": topic, "runs": list(runs)},  # (view: one of two fixed names)
    ).fetchall()
    return [r[0] for r in rows]


@dataclass
class Nugget:
    index: int  # 0-based position in the topic's nuggets
    text: str
    importance: str
    assignments: dict[str, str] = field(default_factory=dict)  # run -> assignment


def nuggets_of(store: Store, assignments: str, runs: Sequence[str], topic: str) -> tuple[str | None, list[Nugget]]:
    """``(nugget set, nuggets)`` of the assignment set's nugget set on ``topic`` (vital first, then
    in their order), each with its assignment to the answer of each of ``runs``."""
    con = store.con
    nugget_set = con.execute("SELECT nuggets FROM qrels_sets WHERE name = ?", [assignments]).fetchall()
    if not nugget_set or nugget_set[0][0] is None:
        return None, []
    name = nugget_set[0][0]
    nuggets = {
        int(i): Nugget(int(i), text, importance)
        for i, text, importance in con.execute(
            "SELECT nugget, text, importance FROM nuggets WHERE nuggets = ? AND topic = ? ORDER BY nugget",
            [name, topic],
        ).fetchall()
    }
    for run, i, assignment in con.execute(
        "SELECT run, nugget, assignment FROM nugget_assignments WHERE qrels = $set AND topic = $topic "
        "AND list_contains($runs, run)",
        {"set": assignments, "topic": topic, "runs": list(runs)},
    ).fetchall():
        if int(i) in nuggets:
            nuggets[int(i)].assignments[run] = assignment
    ordered = sorted(nuggets.values(), key=lambda n: (n.importance != "vital", n.index))
    return name, ordered


def support_of(store: Store, support: str, runs: Sequence[str], topic: str) -> dict[tuple[str, int, int], str]:
    """``{(run, sentence, citation): label}`` of the support set on the answers of ``runs`` to ``topic``."""
    rows = store.con.execute(
        "SELECT run, sentence, citation, label FROM support_labels WHERE qrels = $set AND topic = $topic "
        "AND list_contains($runs, run)",
        {"set": support, "topic": topic, "runs": list(runs)},
    ).fetchall()
    return {(r, int(s), int(c)): label for r, s, c, label in rows}


def nugget_query(store: Store, topic: str) -> str | None:
    """The topic's query as a nugget set gives it (the newest set with a query), when no topic set has it."""
    rows = store.con.execute(
        "SELECT n.query FROM nuggets n JOIN nugget_sets s ON s.name = n.nuggets "
        "WHERE n.topic = ? AND n.query IS NOT NULL ORDER BY s.ingested_at DESC LIMIT 1",
        [topic],
    ).fetchall()
    return rows[0][0] if rows else None

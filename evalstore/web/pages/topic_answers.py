"""The generated answers of a topic page (TREC RAG): for the one or two runs shown, each answer's
sentences with their citations (each marked with its support label), its references, and the
topic's nuggets with their importance and the nuggets each answer covers.

The labels shown are those of the page's judged set where it is of their kind (an assignment set:
its nuggets; a support set: its labels), else of a set that judges the answers (one with scores
first, then by name), named and linked on the page, so that a page under relevance judgments or
support labels shows the nuggets too (and the other way round)."""

from __future__ import annotations

from typing import Any

from .. import answer_queries as aq
from .. import queries as q
from ..context import Ctx

#: how an assignment and a support label are shown: (text, CSS class)
ASSIGNMENT_SHOWN = {
    "support": ("supported", "a-full"),
    "partial_support": ("partial", "a-partial"),
    "not_support": ("not", "a-none"),
}
LABEL_SHOWN = {"full": ("full support", "s-full"), "partial": ("partial support", "s-partial"),
               "none": ("no support", "s-none")}  # fmt: skip


def answers_model(ctx: Ctx, chosen: list[str], topic: str, qrels: str, metric: str, kind: str) -> dict[str, Any] | None:
    """The answers section of a topic page, or None when no run shown answers the topic."""
    store = ctx.store
    answers = aq.answers_of(store, chosen, topic)
    if not answers:
        return None
    runs = [r for r in chosen if r in answers]
    scored = set(ctx.cached("catalogue", lambda: q.catalogue(store)).metrics)
    assignments = qrels if kind == "nuggets" else _pick(aq.judged_sets(store, "nuggets", runs, topic), scored)
    support = qrels if kind == "support" else _pick(aq.judged_sets(store, "support", runs, topic), scored)
    nugget_set, nuggets = aq.nuggets_of(store, assignments, runs, topic) if assignments else (None, [])
    labels = aq.support_of(store, support, runs, topic) if support else {}
    grades = dict(q.judgments(store, qrels, topic)) if kind == "judgments" else {}
    snippets = q.doc_snippets(store, sorted({d for a in answers.values() for d in a.references}))
    href = {r: ctx.links.to("run", r, qrels, metric) for r in runs}
    columns = [_column(answers[r], href[r], labels, grades, snippets, nuggets) for r in runs]
    return {
        "runs": runs,
        "columns": columns,
        "assignments": assignments,
        "assignments_href": _other(ctx, topic, runs, assignments, qrels, scored),
        "nugget_set": nugget_set,
        "nuggets": [
            {
                "text": n.text,
                "vital": n.importance == "vital",
                "importance": n.importance,
                "cells": [_assignment(n.assignments.get(r)) for r in runs],
            }
            for n in nuggets
        ],  # fmt: skip
        "support": support,
        "support_href": _other(ctx, topic, runs, support, qrels, scored),
        "judgments": kind == "judgments",
        "query": next((a.query for a in answers.values() if a.query), None),
    }


def _pick(sets: list[str], scored: set[str]) -> str | None:
    """The set to show: one with scores (the page can link to it) first, then by name."""
    return min(sets, key=lambda s: (s not in scored, s), default=None)


def _other(ctx: Ctx, topic: str, runs: list[str], judged: str | None, qrels: str, scored: set[str]) -> str | None:
    """The topic page of the same runs under another judged set (None: the page's own set, or a set
    without scores, which has no pages)."""
    if judged is None or judged == qrels or judged not in scored:
        return None
    return ctx.links.to("topic", topic, ",".join(runs), judged)


def _assignment(a: str | None) -> dict[str, str]:
    text, cls = ASSIGNMENT_SHOWN.get(a or "", ("not assigned", "a-unj"))
    return {"text": text, "cls": cls, "title": a or "this answer has no assignment of the nugget"}


def _column(
    a: aq.Answer,
    href: str | None,
    labels: dict[tuple[str, int, int], str],
    grades: dict[str, int],
    snippets: dict[str, str],
    nuggets: list[aq.Nugget],
) -> dict[str, Any]:
    cited = {c for s in a.sentences for c in s.citations}
    sentences = []
    for s in a.sentences:
        cites = []
        for c in s.citations:
            label = labels.get((a.run, s.index, c))
            text, cls = LABEL_SHOWN.get(label or "", ("not labelled", "s-unl"))
            doc = a.references[c] if c < len(a.references) else "?"
            cites.append({"n": c + 1, "doc": doc, "cls": cls, "title": f"[{c + 1}] {doc}: {text}"})
        sentences.append({"text": s.text, "cites": cites})
    counts = {k: sum(n.assignments.get(a.run) == k for n in nuggets) for k in ASSIGNMENT_SHOWN}
    vital = [n for n in nuggets if n.importance == "vital"]
    return {
        "run": a.run,
        "href": href,
        "length": a.response_length,
        "length_given": a.length_given,
        "sentences": sentences,
        "references": [
            {"n": i + 1, "doc": d, "grade": grades.get(d), "snippet": snippets.get(d), "cited": i in cited}
            for i, d in enumerate(a.references)
        ],
        "covered": counts,
        "vital_covered": sum(n.assignments.get(a.run) == "support" for n in vital),
        "n_vital": len(vital),
        "n_nuggets": len(nuggets),
    }

"""Reports of :mod:`evalstore.explain.explanation`: the per-rank table of one metric on one run and topic, the
ideal list's table where the metric has one, and the final value in the legend; and the
comparison of the conventions (each one's order, depth and value, and the documents whose rank
differs between them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..output.table import Output, Table
from .explanation import ORDER_TEXT, Explanation

#: What a column of a per-rank relation means (the blocks' further columns included).
COLUMN_TEXT = {
    "rank": "rank in the convention's order (after --depth)",
    "doc": "the document",
    "score": "the run's score",
    "grade": "its grade in the qrels (blank: unjudged; negative: pooled but unjudged)",
    "trec_eval rank": "its rank in trec_eval's order (score descending, ties by docno descending)",
    "eval rank": "its rank among the judged documents (judged_only: the condensed list)",
    "gain": "the gain the metric gives it (AP, P, R, RR, Bpref: 1 if relevant, else 0)",
    "discount": "what the rank divides the gain by (nDCG: log2(r+1); ERR, RR: r; Q-measure: beta cg_I(r) + r)",
    "cnt": "relevant documents at ranks <= r",
    "cg": "cumulative gain at rank r",
    "cg_ideal": "cumulative gain of the ideal list at rank r",
    "nr": "judged nonrelevant documents at ranks <= r",
    "p": "the probability that the user stops at this document",
    "go_on": "the probability that the user reaches rank r (the product of 1 - p above it)",
    "contribution": "the term the SQL block adds for this rank (blank: nothing)",
    "running": "the value over ranks <= r: the sum of the contributions so far / norm",
}
#: What a column means in the judged list of an answer (by kind: nuggets, support), where it differs.
ANSWER_COLUMN_TEXT = {
    "nuggets": {
        "rank": "the nugget's position in the topic's nuggets",
        "doc": "the nugget (its text in the nugget set)",
        "grade": "its assignment's grade: 2 support, 1 partial_support, 0 not_support",
        "gain": "the credit of the assignment (support 1, partial_support 0.5 or, strict, 0)",
        "discount": "the nugget's weight in the score (the vital forms: vital 1, okay 0)",
        "importance": "vital or okay, in the nugget set",
        "assignment": "the nugget's assignment to this answer in the assignment set",
        "length": "the answer's response length (words), for a length budget @L",
        "contribution": "gain x discount (0 over the length budget)",
        "running": "the value over the nuggets so far: the sum of the contributions / norm (the weights' sum)",
    },
    "support": {
        "rank": "the pair's (precision) or the sentence's (recall) position in the answer",
        "doc": "the document cited (recall: the best-supporting citation of the sentence)",
        "grade": "the support label's grade: 2 full, 1 partial, 0 none (blank: unlabelled, counts as none)",
        "gain": "the credit: full 1, partial 0.5, none or unlabelled 0 (recall: the sentence's best)",
        "discount": "every pair or sentence weighs 1",
        "sentence": "the sentence cited from (0-based)",
        "citation": "the citation: the index into the answer's references (0-based)",
        "label": "the support label of the citation (full, partial, none; blank: unlabelled)",
        "citations": "the sentence's citations (0: the sentence cites nothing and counts 0)",
        "text": "the sentence",
        "contribution": "the credit",
        "running": "the value so far: the sum of the credits / norm (the pairs or the sentences)",
    },
}
#: Rows shown by default beyond the last one that contributes (for context).
CONTEXT_ROWS = 3


def shown_rows(ex: Explanation, rows: int | None = None, all_rows: bool = False) -> int:
    """How many rows a report shows: all, ``rows``, or by default the ranks through the cutoff of a
    metric that has one (nothing below it counts), else every row through the last one that
    contributes and a few more."""
    if all_rows:
        return len(ex.rows)
    if rows is not None:
        return min(max(rows, 0), len(ex.rows))
    if ex.cutoff:
        return min(len(ex.rows), max(ex.cutoff, ex.last_contributing()))
    return min(len(ex.rows), max(ex.last_contributing() + CONTEXT_ROWS, 10))


def value_line(ex: Explanation) -> str:
    """The final value and how the terms make it."""
    v = _num(ex.value)
    what = f"{ex.metric} of run {ex.run} on topic {ex.topic}: {v}"
    if "contribution" not in ex.columns:
        return f"{what} (its definition's value over the ranked list above)"
    if ex.total is None:
        return f"{what} (no document contributes: the metric's value for such a topic)"
    if ex.running_kind == "max":
        return f"{what} = the largest contribution"
    if ex.norm is None or ex.norm == 1:
        return f"{what} = the sum of the contributions, {_num(ex.total)}"
    return f"{what} = sum of the contributions / norm = {_num(ex.total)} / {_num(ex.norm)}"


def explanation_report(ex: Explanation, rows: int | None = None, all_rows: bool = False) -> Output:
    """The per-rank table, the ideal list and the value (see the module docstring)."""
    n = shown_rows(ex, rows, all_rows)
    title = f"{ex.metric} of {ex.run} on topic {ex.topic}, qrels {ex.qrels}, convention {ex.convention}"
    notes = list(ex.notes)
    if n < len(ex.rows):
        rest = ex.rows[n:]
        c = ex.columns.index("contribution") if "contribution" in ex.columns else None
        adds = "none of them contributes" if c is not None and not any(r[c] for r in rest) else "some may count"
        if ex.cutoff and n >= ex.cutoff:
            adds = f"below the cutoff @{ex.cutoff}: they do not count"
        what = "row(s)" if ex.kind != "judgments" else "retrieved document(s)"
        notes.append(f"{len(rest)} more {what} not shown ({adds}); --all shows every row")
    tables = [Table(list(ex.columns), ex.rows[:n], title=title)]
    if ex.ideal_rows:
        tables.append(
            Table(list(ex.ideal_columns), ex.ideal_rows, title="the ideal list (running: its sum so far, the norm)")
        )
    name = ex.metric.split("(")[0].split("@")[0]
    about = ex.doc if ex.doc.lower().startswith(name.lower()) else f"{ex.metric}: {ex.doc}"
    answers = ex.kind != "judgments"
    legend = [value_line(ex), about]
    if not answers:
        legend.append(f"order: {ORDER_TEXT.get(ex.order, ex.order)}" + _depth(ex))
    if ex.query is not None:
        legend.insert(0, f"topic {ex.topic}: {ex.query}")
    if ex.R is not None:
        legend.append(f"R = {ex.R} relevant document(s) in the qrels for the topic")
    listed = "the judged answers" if answers else "the ranked list"
    legend.append(
        f"computed by {ex.sql} (its CTE {ex.relation}) over {listed} eval builds; eval's value is the same"
        + ("" if ex.stored_as == ex.metric else f" (stored as {ex.stored_as})")
    )
    texts = {**COLUMN_TEXT, **ANSWER_COLUMN_TEXT.get(ex.kind, {})}
    hidden = ("score",) if answers else ("rank", "doc", "score")
    legend += [f"{c}: {texts[c]}" for c in ex.columns if c in texts and c not in hidden]
    legend += [f"{c}: a column of the block's relation {ex.relation}" for c in ex.extras if c not in texts]
    document = {
        "metric": ex.metric,
        "stored_as": ex.stored_as,
        "qrels": ex.qrels,
        "run": ex.run,
        "topic": ex.topic,
        "query": ex.query,
        "convention": ex.convention,
        "order": ex.order,
        "depth": ex.depth,
        "sql": ex.sql,
        "value": ex.value,
        "total": ex.total,
        "norm": ex.norm,
        "R": ex.R,
        "rows": [dict(zip(ex.columns, r)) for r in ex.rows[:n]],
        "ideal": ex.ideal_records() if ex.ideal_rows else None,
    }
    return Output(
        tables,
        data=Table(list(ex.columns), ex.rows[:n], None, [], None),
        legend=legend,
        notes=notes,
        document=document,
    )


def conventions_report(cases: Mapping[str, Explanation | str]) -> Output:
    """Each convention's order, depth and value, and the documents whose rank differs."""
    done = {c: ex for c, ex in cases.items() if isinstance(ex, Explanation)}
    base = done.get("trec_eval")
    summary: list[tuple[Any, ...]] = []
    for conv, ex in cases.items():
        if isinstance(ex, str):
            summary.append((conv, None, None, None, ex))
            continue
        if base is None or conv == "trec_eval":
            change = ""
        elif _same(ex.value, base.value):
            change = "same value"
        elif ex.rounded is not None and ex.order == base.order and ex.depth == base.depth:
            change = f"rounded to {ex.rounded} decimals"
        else:
            change = f"{_signed((ex.value or 0.0) - (base.value or 0.0))} vs trec_eval"
        summary.append((conv, ORDER_TEXT.get(ex.order, ex.order), ex.depth, ex.value, change))
    first = next(iter(done.values()), None)
    title = (
        f"{first.metric} of {first.run} on topic {first.topic}, qrels {first.qrels}, under each convention"
        if first
        else "under each convention"
    )
    tables = [Table(["convention", "order", "depth", "value", "change"], summary, title=title)]
    ranks, moved = _rank_table(done)
    notes = []
    if ranks.rows:
        tables.append(ranks)
    elif done:
        notes.append("every convention ranks the run's documents in the same order")
    legend = [f"{moved} document(s) change rank between the conventions" if moved else "no document changes rank"]
    document = {
        "conventions": {
            c: (
                {"order": ex.order, "depth": ex.depth, "value": ex.value, "stored_as": ex.stored_as}
                if isinstance(ex, Explanation)
                else {"not_evaluated": ex}
            )
            for c, ex in cases.items()
        },
        "ranks": ranks.records(),
    }
    return Output(tables, data=tables[0], legend=legend, notes=notes, document=document)


def _rank_table(done: Mapping[str, Explanation]) -> tuple[Table, int]:
    convs = list(done)
    ranks: dict[str, dict[str, Any]] = {}
    facts: dict[str, tuple[Any, Any]] = {}
    for conv, ex in done.items():
        doc, rank, score, grade = (ex.columns.index(c) for c in ("doc", "rank", "score", "grade"))
        for r in ex.rows:
            ranks.setdefault(r[doc], {})[conv] = r[rank]
            facts.setdefault(r[doc], (r[score], r[grade]))
    differ = [d for d, by in ranks.items() if len({by.get(c) for c in convs}) > 1]
    key = convs[0] if convs else ""
    differ.sort(key=lambda d: (ranks[d].get(key) is None, ranks[d].get(key) or 0, d))
    rows = [(d, *facts[d], *[ranks[d].get(c) for c in convs]) for d in differ]
    title = "documents whose rank differs (blank: beyond the convention's depth)"
    return Table(["doc", "score", "grade", *[f"rank {c}" for c in convs]], rows, title=title), len(differ)


def _depth(ex: Explanation) -> str:
    return f"; only the top {ex.depth} documents" if ex.depth is not None else ""


def _num(v: float | None) -> str:
    """A value in full (integers without decimals)."""
    if v is None:
        return "none"
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _signed(v: float) -> str:
    return f"{v:+.6g}"


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and a != a and b != b)

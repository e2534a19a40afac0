"""Generated answers evaluated without a store file (:func:`evalstore.evaluate`, the source
:class:`~evalstore.evaluation.request.GivenAnswers`): the answers and their judgments, given as
dicts, DataFrames or paths, are ingested into a store in memory by the store's own ingest (the
same checks, the same messages) and evaluated by the one evaluation path of stored runs; nothing
is kept. (Ranked lists given so are read without a store, :mod:`evalstore.ingest.tables`; answers
go through four ingests and the judged lists of :mod:`evalstore.metrics.answer_lists`, which read
the store's tables, so a store in memory is the one path rather than a second one.)

* answers: a list of TREC RAG answer dicts (``run_id``, ``topic_id``, ``references``, ``answer``),
  ``{run: [answers]}`` (each run's answers, ``run_id`` optional), or a path of JSON lines;
* judgments: nuggetizer's assignment records (``{"qid", "run_id", "nuggets": [{"text",
  "importance", "assignment"}]}``), or a DataFrame of assignments, one per row (``qid`` or
  ``topic_id``, ``run_id``, ``text``, ``importance``, ``assignment``): the nugget set is made of
  the nuggets they assign (a nugget's importance must be the same wherever it is assigned);
  support labels (``{"run_id", "topic_id", "sentence", "citation", "label"}`` records or a
  DataFrame of them; those of the runs given); or ordinary qrels (anything ``Store.ingest_qrels`` reads), the answers'
  references then being evaluated as ranked lists.

A bad record is reported as the ingest reports a bad line: its position in the list given (1-based)
is its line, in a file named after what it is (``answers.jsonl``, ``assignments.jsonl``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..db.connection import Settings, connect
from ..db.handle import StoreHandle
from ..db.migrations import migrate
from ..errors import ArgumentError
from ..ingest import ingest_qrels
from ..ingest.answers import ingest_answers
from ..ingest.files import content_lines
from ..ingest.nuggets import ingest_assignments, ingest_nuggets
from ..ingest.support import ingest_support
from ..metrics import sql_functions
from ..metrics.options import DEFAULTS, EvalOptions
from ..results.eval_result import EvalResult
from .given_answers import first_json
from .stored import evaluate_runs

#: the columns of a DataFrame of assignments (a topic column is one of TOPIC_COLUMNS)
ASSIGNMENT_COLUMNS = {"run_id", "text", "importance", "assignment"}
TOPIC_COLUMNS = ("qid", "topic_id")
SUPPORT_COLUMNS = {"run_id", "topic_id", "sentence", "citation", "label"}


def _records(x: Any) -> list[dict] | None:
    """A DataFrame's rows (pandas, polars, pyarrow) as dicts; None for anything else."""
    if hasattr(x, "to_pylist"):  # pyarrow Table
        return list(x.to_pylist())
    if hasattr(x, "to_dicts"):  # polars
        return list(x.to_dicts())
    if hasattr(x, "to_dict") and hasattr(x, "columns"):  # pandas
        return list(x.to_dict("records"))
    return None


def judged_kind(qrels: Any) -> tuple[str, Any]:
    """``(kind, lines)``: 'nuggets' with nuggetizer's assignment records, 'support' with label
    records or a path, or 'judgments' with the qrels as given."""
    if isinstance(qrels, (str, os.PathLike)):
        if first_json(Path(qrels), "nuggets"):
            return "nuggets", str(qrels)
        return ("support", str(qrels)) if first_json(Path(qrels), "label") else ("judgments", qrels)
    rows = _records(qrels)
    if rows is not None and rows:
        cols = set(rows[0])
        if ASSIGNMENT_COLUMNS <= cols and cols & set(TOPIC_COLUMNS):
            return "nuggets", _grouped(rows)
        if SUPPORT_COLUMNS <= cols:
            return "support", rows
    if isinstance(qrels, Sequence) and not isinstance(qrels, str) and qrels and isinstance(qrels[0], Mapping):
        if "nuggets" in qrels[0]:
            return "nuggets", list(qrels)
        if "label" in qrels[0]:
            return "support", list(qrels)
    return "judgments", qrels


def _grouped(rows: list[dict]) -> list[dict]:
    """Assignment rows (one per nugget) as nuggetizer's records (one per run and topic)."""
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        topic = str(r.get("qid", r.get("topic_id")))
        rec = out.setdefault((str(r["run_id"]), topic), {"qid": topic, "run_id": str(r["run_id"]), "nuggets": []})
        rec["nuggets"].append({"text": r["text"], "importance": r["importance"], "assignment": r["assignment"]})
    return list(out.values())


def nuggets_of(records: list[dict]) -> list[dict]:
    """The nugget set the assignment records assign: each topic's nuggets in the order first seen,
    each with its importance (the same wherever it is assigned, else an error)."""
    topics: dict[str, dict[str, str]] = {}
    for rec in records:
        nuggets = topics.setdefault(str(rec.get("qid", rec.get("topic_id"))), {})
        for n in rec.get("nuggets") or []:
            if not isinstance(n, Mapping) or "text" not in n:
                continue  # the ingest of the assignments names the bad record
            seen = nuggets.setdefault(n["text"], n.get("importance", "okay"))
            if seen != n.get("importance", seen):
                raise ArgumentError(
                    f"the nugget {n['text']!r} of topic {rec.get('qid')!r} is {seen} in one assignment and "
                    f"{n.get('importance')} in another: give each nugget one importance"
                )
    return [{"qid": t, "nuggets": [{"text": x, "importance": i} for x, i in ns.items()]} for t, ns in topics.items()]


def evaluate_answers(
    qrels: Any, answers: list[dict] | str, metrics: Sequence[str] | str, options: EvalOptions = DEFAULTS,
    qrels_name: str = "qrels",
) -> EvalResult:  # fmt: skip
    """Evaluate the answers against ``qrels`` (see the module docstring) in a store in memory."""
    kind, judged = judged_kind(qrels)
    with tempfile.TemporaryDirectory(prefix="evalstore-answers-") as tmp, _memory_store() as store:
        ingest_answers(store, _file(tmp, "answers.jsonl", answers))
        if kind == "nuggets":
            records = judged if isinstance(judged, list) else _read_jsonl(judged)
            ingest_nuggets(store, _file(tmp, "nuggets.jsonl", nuggets_of(records)), name="nuggets")
            ingest_assignments(store, _file(tmp, "assignments.jsonl", judged), nuggets="nuggets", name=qrels_name)
        elif kind == "support":  # the labels of the runs given (a label of another run has no answer here)
            runs = {str(r) for (r,) in store.sql("SELECT name FROM runs").rows}
            given = judged if isinstance(judged, list) else _read_jsonl(judged)
            labels = [x for x in given if x.get("run_id") in runs]
            ingest_support(store, _file(tmp, "support.jsonl", labels), name=qrels_name)
        else:
            ingest_qrels(store, judged, name=qrels_name, progress=False)
        return evaluate_runs(store, qrels_name, None, metrics, options=options, save=False, progress=False)


def _memory_store() -> StoreHandle:
    """A store in memory, with the schema and the SQL functions, for one call."""
    con = connect(":memory:", read_only=False, settings=Settings.resolve())
    try:
        sql_functions.register(con)  # (migrations call them)
        migrate(con, ":memory:")
    except BaseException:
        con.close()
        raise
    return StoreHandle(con, ":memory:")


def _file(folder: str, name: str, lines: list[dict] | str) -> str:
    """A JSON-lines file of ``lines`` (a path is used as it is)."""
    if isinstance(lines, str):
        return lines
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(x, ensure_ascii=False, default=str) + "\n" for x in lines)
    return path


def _read_jsonl(path: str) -> list[dict]:
    out = []
    for _, line in content_lines(Path(path)):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # the ingest of the assignments names the bad line
    return out

"""``ingest nuggets`` and ``ingest assignments``: nugget sets and nugget assignment sets, in
nuggetizer's file formats (castorini/nuggetizer; docs/rag.md).

* A **nugget set** (``nugget_set_meta``, ``nugget_topic_data``, ``nugget_data``): one line per
  topic, ``{"qid", "query", "nuggets": [{"text", "importance": "vital"|"okay"}]}``, named like a
  topic set and identified by its content; versions (manual, automatic, post-edited) are sets of
  their own names. A nugget is known by its topic and its text (each text once per topic).
* A **nugget assignment set** is a qrels set of kind ``nuggets`` over one nugget set (``qrels_meta``,
  ``assignment_data``): nuggetizer's assignment output in answers mode, one line per run and topic,
  ``{"qid", "run_id", "nuggets": [{"text", "importance", "assignment"}]}`` with the assignment
  ``support``, ``partial_support`` or ``not_support``. Each assigned nugget is matched to its nugget
  by topic and text; a topic or nugget the nugget set lacks, an unknown label, an importance other
  than the nugget set's, or a nugget assigned twice to one answer is an error with its line.
  Its identity is its content together with the nugget set's.

Both are stored in one transaction, checked in DuckDB first: nothing is half-written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..db.drop import text_set_id
from ..errors import IngestError
from .checks import check_name
from .formats import strip_suffixes
from .jsonl import LineFile, LineGroup, content_sha, first_error, read_lines, repeated
from .text_formats import CTL, json_first
from .write import IngestResult, QrelsMeta, qrels_meta_row

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

FORMAT = "nuggetizer"
TOPIC_KEYS = ("qid", "topic_id")
RUN_KEYS = ("run_id",)
IMPORTANCE = ("vital", "okay")
#: nuggetizer's assignment labels and the grade each is stored as (what `agree` compares)
ASSIGNMENTS = {"support": 2, "partial_support": 1, "not_support": 0}
_SUFFIXES = (".gz", ".jsonl", ".json", ".txt")
NUGGETS_EXPECTED = (
    'one topic per line: {"qid": "...", "query": "...", "nuggets": [{"text": "...", "importance": "vital"}, ...]}'
)
ASSIGN_EXPECTED = (
    'one answer per line: {"qid": "...", "run_id": "...", "nuggets": [{"text": "...", "importance": "vital", '
    '"assignment": "support"}, ...]} (assignment: support, partial_support or not_support)'
)
E_JSON, E_TOPIC, E_LIST, E_NUGGET, E_IMPORTANCE, E_RUN, E_LABEL, E_CTL = range(1, 9)

_NUGGETS = "json_extract(line, '$.nuggets[*]')"
# a label as nuggetizer writes it; 'Partial Support', 'not-support' are read as their label
_LABEL = "replace(replace(lower(trim(json_extract_string(x, '$.assignment'))), ' ', '_'), '-', '_')"


def _checks(assignments: bool) -> str:
    """SQL: the error code of a nugget line (``assignments``: of an assignment line), 0 when good."""
    topic = json_first(TOPIC_KEYS, scalar_ok=True)
    run = json_first(RUN_KEYS, scalar_ok=True)
    all_nuggets = f"coalesce(list_bool_and(list_transform({_NUGGETS}, lambda x: coalesce({{}}, FALSE))), TRUE)"
    nugget_ok = (
        "json_type(x) = 'OBJECT' AND json_type(x, '$.text') = 'VARCHAR' "
        "AND trim(json_extract_string(x, '$.text')) <> ''"
    )
    importance = "lower(trim(json_extract_string(x, '$.importance')))"
    importance_ok = f"{importance} IN {IMPORTANCE}" + (
        " OR json_type(x, '$.importance') IS NULL" if assignments else ""
    )
    labels = tuple(ASSIGNMENTS)
    return f"""CASE
        WHEN NOT json_valid(line) OR json_type(line) <> 'OBJECT' THEN {E_JSON}
        WHEN coalesce(trim({topic}), '') = '' THEN {E_TOPIC}
        WHEN {CTL.format(f=topic)} THEN {E_CTL}
        WHEN {"coalesce(trim(" + run + "), '') = ''" if assignments else "FALSE"} THEN {E_RUN}
        WHEN json_type(line, '$.nuggets') IS DISTINCT FROM 'ARRAY' THEN {E_LIST}
        WHEN NOT {all_nuggets.format(nugget_ok)} THEN {E_NUGGET}
        WHEN NOT {all_nuggets.format(importance_ok)} THEN {E_IMPORTANCE}
        WHEN {f"NOT {all_nuggets.format(f'{_LABEL} IN {labels}')}" if assignments else "FALSE"} THEN {E_LABEL}
        ELSE 0 END"""


PROBLEMS = {
    E_JSON: "not a JSON object",
    E_TOPIC: "no qid (the topic id: a string or number)",
    E_CTL: "a control character in the topic id",
    E_RUN: "no run_id (a string): an assignment judges one run's answer",
    E_LIST: "no nuggets: a list under 'nuggets'",
    E_NUGGET: 'a nugget is not an object with a non-empty "text" string',
    E_IMPORTANCE: "a nugget's importance is not vital or okay",
    E_LABEL: "a nugget's assignment is not support, partial_support or not_support",
}


def _default_name(files: list[LineFile], name: str | None, what: str) -> str:
    if name is not None:
        return check_name(name, what)
    if len(files) == 1 and files[0].name != "<stdin>":
        stem = strip_suffixes(Path(files[0].name).name, _SUFFIXES)
        if stem:
            return check_name(stem, what)
    raise IngestError(f"name the {what} with --name", file=", ".join(f.name for f in files))


def _unnest(con: Any, source: str, target: str, extra: str = "") -> None:
    """``target``: one row per nugget of each line of ``source`` (its position, text, importance)."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {target} AS
            SELECT file, ln, line, trim({json_first(TOPIC_KEYS, scalar_ok=True)}) AS topic {extra},
                   n.i - 1 AS nugget, json_extract_string(n.x, '$.text') AS text,
                   lower(trim(json_extract_string(n.x, '$.importance'))) AS importance,
                   replace(replace(lower(trim(json_extract_string(n.x, '$.assignment'))), ' ', '_'), '-', '_')
                       AS assignment
            FROM {source}, unnest({_NUGGETS}) WITH ORDINALITY AS n(x, i)"""
    )


# ---------------------------------------------------------------------------------------------- nuggets
def ingest_nuggets(
    store: StoreHandle, paths: str | os.PathLike | Iterable, *, name: str | None = None, replace: bool = False
) -> IngestResult:
    """Ingest a nugget file (nuggetizer's ``{"qid", "query", "nuggets": [{"text", "importance"}]}``
    lines) as the nugget set ``name`` (default: the file name). See :mod:`evalstore.ingest.nuggets`."""
    con = store.con
    with read_lines(con, paths, "_nugget_lines") as files:
        set_name = _default_name(files, name, "nugget set")
        first_error(con, "_nugget_lines", _checks(False), files, PROBLEMS, NUGGETS_EXPECTED)
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _nugget_topics AS SELECT *, trim({json_first(TOPIC_KEYS, scalar_ok=True)}) "
            "AS topic, json_extract_string(line, '$.query') AS query FROM _nugget_lines"
        )
        try:
            repeated(con, "_nugget_topics", "topic", files, "the topic", "each topic on one line")
            _unnest(con, "_nugget_lines", "_nuggets")
            repeated(
                con, "_nuggets", "topic, text", files, "the nugget of topic and text", "each nugget once per topic"
            )
            sha = content_sha(con, "_nugget_lines")
            file_sha = files[0].file_sha if len(files) == 1 else sha
            sources = ",".join(f.name for f in files)
            with store.transaction():
                return _store_nugget_set(store, set_name, sources, sha, file_sha, replace)
        finally:
            for t in ("_nugget_topics", "_nuggets"):
                con.execute(f"DROP TABLE IF EXISTS {t}")


def _store_nugget_set(
    store: StoreHandle, name: str, sources: str, sha: str, file_sha: str, replace: bool
) -> IngestResult:
    con = store.con
    old = con.execute("SELECT nuggets_id, sha256 FROM nugget_set_meta WHERE name = ?", [name]).fetchall()
    if old and old[0][1] == sha:
        return IngestResult("nugget set", name, "unchanged", [sources])
    if old and not replace:
        raise IngestError(
            f"a nugget set named {name!r} is already stored with other content", file=sources,
            expected="--replace to replace it, or another --name",
        )  # fmt: skip
    counts = con.execute(
        "SELECT count(DISTINCT topic), count(*), count(*) FILTER (WHERE importance = 'vital') FROM _nuggets"
    ).fetchall()[0]
    n_topics = con.execute("SELECT count(*) FROM _nugget_topics").fetchall()[0][0]
    values = [sources, FORMAT, sha, file_sha, n_topics, counts[1], counts[2]]
    if old:
        nid = int(old[0][0])
        users = _assignment_sets_of(con, nid)
        if users:
            raise IngestError(
                f"the assignment set(s) {', '.join(users)} match their nuggets in {name!r} by text: replacing it "
                "would leave them stale",
                file=sources,
                expected="drop them first (evalstore drop qrels ...), or ingest the new nuggets under another name",
            )
        for table in ("nugget_data", "nugget_topic_data"):
            con.execute(f"DELETE FROM {table} WHERE nuggets_id = ?", [nid])
        con.execute(
            "UPDATE nugget_set_meta SET source = ?, format = ?, sha256 = ?, file_sha256 = ?, n_topics = ?, "
            "n_nuggets = ?, n_vital = ?, ingested_at = current_timestamp WHERE nuggets_id = ?",
            [*values, nid],
        )
    else:
        nid = con.execute(
            "INSERT INTO nugget_set_meta (name, source, format, sha256, file_sha256, n_topics, n_nuggets, n_vital) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING nuggets_id",
            [name, *values],
        ).fetchall()[0][0]
    con.execute("INSERT INTO nugget_topic_data SELECT ?, topic, query, ln FROM _nugget_topics ORDER BY file, ln", [nid])
    con.execute(
        "INSERT INTO nugget_data SELECT ?, topic, nugget, text, importance FROM _nuggets ORDER BY file, ln, nugget",
        [nid],
    )
    status = "replaced" if old else "added"
    return IngestResult("nugget set", name, status, [sources], n_rows=int(counts[1]), n_topics=int(n_topics),
                        messages=[f"{counts[2]} vital and {counts[1] - counts[2]} okay nuggets"])  # fmt: skip


def _assignment_sets_of(con: Any, nuggets_id: int) -> list[str]:
    return [
        r[0]
        for r in con.execute("SELECT name FROM qrels_meta WHERE nuggets_id = ? ORDER BY name", [nuggets_id]).fetchall()
    ]


def nugget_set(store: StoreHandle, name: str) -> tuple[int, str]:
    """``(nuggets_id, sha256)`` of the nugget set ``name``; NotFoundError with the closest names."""
    nid = text_set_id(store, "nuggets", name)
    [(sha,)] = store.con.execute("SELECT sha256 FROM nugget_set_meta WHERE nuggets_id = ?", [nid]).fetchall()
    return nid, str(sha)


# ---------------------------------------------------------------------------------------------- assignments
def ingest_assignments(
    store: StoreHandle,
    paths: str | os.PathLike | Iterable,
    *,
    nuggets: str,
    name: str | None = None,
    replace: bool = False,
) -> IngestResult:
    """Ingest nuggetizer's assignment output (answers mode: ``{"qid", "run_id", "nuggets": [{"text",
    "importance", "assignment"}]}`` lines) as the assignment set ``name`` (a qrels set of kind
    ``nuggets``; default name: the file name) over the nugget set ``nuggets``. All files form one
    set. See :mod:`evalstore.ingest.nuggets`."""
    nid, nuggets_sha = nugget_set(store, nuggets)
    con = store.con
    with read_lines(con, paths, "_assign_lines") as files:
        set_name = _default_name(files, name, "assignment set")
        first_error(con, "_assign_lines", _checks(True), files, PROBLEMS, ASSIGN_EXPECTED)
        try:
            run = f", trim({json_first(RUN_KEYS, scalar_ok=True)}) AS run"
            topic = f"trim({json_first(TOPIC_KEYS, scalar_ok=True)}) AS topic"
            con.execute(f"CREATE OR REPLACE TEMP TABLE _assign_answers AS SELECT *, {topic} {run} FROM _assign_lines")
            repeated(
                con, "_assign_answers", "run, topic", files, "the answer of run and topic", "one line per run and topic"
            )
            _unnest(con, "_assign_lines", "_assigned_raw", run)
            _match(con, nid, nuggets, files)
            sha = con.execute(
                "SELECT sha256(? || ':' || ?)", [content_sha(con, "_assign_lines"), nuggets_sha]
            ).fetchall()[0][0]
            # (no file hash in the identity: the same file over another nugget set is other content)
            g = LineGroup(0, [], sha, set_name, file_sha=None, source_names=[f.name for f in files])
            file_sha = files[0].file_sha if len(files) == 1 else None
            with store.transaction():
                return _store_assignments(store, g, nid, file_sha, replace)
        finally:
            for t in ("_assign_answers", "_assigned_raw", "_assigned"):
                con.execute(f"DROP TABLE IF EXISTS {t}")


def _match(con: Any, nid: int, nuggets: str, files: list[LineFile]) -> None:
    """Match every answer's topic and every assigned nugget to its nugget (topic, text) of the
    nugget set ``nid``; the first that fails is an error with its line."""
    unknown = con.execute(
        """SELECT file, ln, line, topic FROM _assign_answers a
           WHERE NOT EXISTS (SELECT 1 FROM nugget_topic_data t WHERE t.nuggets_id = ? AND t.topic = a.topic)
           ORDER BY file, ln LIMIT 1""",
        [nid],
    ).fetchall()
    if unknown:
        f, ln, line, topic = unknown[0]
        raise IngestError(f"the topic {topic!r} has no nuggets in the nugget set {nuggets!r}", file=files[f].name,
                          line=int(ln), text=line, expected=f"the topics of {nuggets!r}")  # fmt: skip
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _assigned AS
           SELECT a.*, d.nugget AS matched, d.importance AS set_importance,
                  EXISTS (SELECT 1 FROM nugget_topic_data t
                          WHERE t.nuggets_id = $nid AND t.topic = a.topic) AS known_topic
           FROM _assigned_raw a
           LEFT JOIN nugget_data d ON d.nuggets_id = $nid AND d.topic = a.topic AND d.text = a.text""",
        {"nid": nid},
    )
    bad = con.execute(
        """SELECT file, ln, line, topic, text, importance, set_importance, known_topic, matched FROM _assigned
           WHERE matched IS NULL OR (importance IS NOT NULL AND importance <> set_importance)
           ORDER BY file, ln, nugget LIMIT 1"""
    ).fetchall()
    if bad:
        f, ln, line, topic, text, importance, set_importance, known_topic, matched = bad[0]
        if not known_topic:
            problem = f"the topic {topic!r} has no nuggets in the nugget set {nuggets!r}"
        elif matched is None:
            problem = f"{text!r} is not a nugget of topic {topic!r} in the nugget set {nuggets!r}"
        else:
            problem = f"the nugget {text!r} is {importance} here but {set_importance} in the nugget set {nuggets!r}"
        raise IngestError(problem, file=files[f].name, line=int(ln), text=line,
                          expected=f"the nuggets of {nuggets!r}, matched by topic and text")  # fmt: skip
    repeated(con, "_assigned", "run, topic, text", files, "the nugget assigned to run, topic and text",
             "each nugget assigned once per answer")  # fmt: skip


def _store_assignments(store: StoreHandle, g: LineGroup, nid: int, file_sha: str | None, replace: bool) -> IngestResult:
    con = store.con
    n_judged = con.execute("SELECT count(*) FROM _assigned").fetchall()[0][0]
    n_topics = con.execute("SELECT count(DISTINCT topic) FROM _assign_answers").fetchall()[0][0]
    meta = QrelsMeta(g.final, ",".join(g.sources), FORMAT, g.sha, file_sha, int(n_topics), int(n_judged), 2, None,
                     kind="nuggets", nuggets_id=nid)  # fmt: skip
    qid, res = qrels_meta_row(store, g, meta, replace)
    if qid is None:
        return res
    con.execute(
        "INSERT INTO assigned_answer_data (qrels_id, run, topic, line_no) "
        "SELECT ?, run, topic, ln FROM _assign_answers ORDER BY run, topic",
        [qid],
    )
    grade = " ".join(f"WHEN '{k}' THEN {v}" for k, v in ASSIGNMENTS.items())
    con.execute(
        "INSERT INTO assignment_data (qrels_id, run, topic, nugget, assignment, grade, line_no) "
        f"SELECT ?, run, topic, matched, assignment, CASE assignment {grade} END, ln FROM _assigned "
        "ORDER BY run, topic, matched",
        [qid],
    )
    partial = con.execute(
        """SELECT count(*) FROM (SELECT run, topic, count(*) AS n FROM _assigned GROUP BY ALL) a
           JOIN (SELECT topic, count(*) AS n FROM nugget_data WHERE nuggets_id = ? GROUP BY topic) t USING (topic)
           WHERE a.n < t.n""",
        [nid],
    ).fetchall()[0][0]
    if partial:
        res.messages.append(
            f"{partial} answer(s) are assigned only some of their topic's nuggets; their scores count the nuggets "
            "assigned (as nuggetizer's calculate_nugget_scores does)"
        )
    n_runs = con.execute("SELECT count(DISTINCT run) FROM _assign_answers").fetchall()[0][0]
    res.kind = "assignment set"
    res.messages.insert(0, f"{n_judged} nugget assignments to the answers of {n_runs} run(s)")
    return res

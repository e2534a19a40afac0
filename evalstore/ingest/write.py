"""Writing parsed and checked rows to the store: run_meta / run_row_data and qrels_meta /
qrels_data, the replace rules, and the result of an ingest call.

Called inside the store's transaction (see :meth:`evalstore.Store.transaction`): either every run
or set of a call is stored, or none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from ..db.drop import analyses_reading, drop_analyses
from ..errors import IngestError
from ..output.text import count
from .checks import check_replaceable_qrels
from .staging import Group, Staging

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

RANK_CHUNK_ROWS = 1_000_000
#: The tables holding a run's content (its rows, answers) and what was computed from it: emptied
#: when the run is replaced (the recipe of a fused run and the header of the old content go with it)
CONTENT_TABLES = (
    "run_row_data", "answer_data", "answer_sentence_data", "score_data", "evaluations", "fusion_meta",
    "fusion_inputs", "run_text_data",
)  # fmt: skip
#: Rows of fast-read runs per INSERT statement.
INSERT_ROWS = 1_000_000


@dataclass
class IngestResult:
    kind: str  # 'run' or 'qrels'
    name: str
    status: str  # 'added', 'replaced', 'unchanged'
    files: list[str]
    n_rows: int = 0
    n_topics: int = 0
    n_dropped_duplicates: int = 0
    messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status == "unchanged":
            same = (
                f"{self.kind} {self.name!r}: identical content and options already stored under this name (same sha256)"
            )
            return same + (f"; {'; '.join(self.messages)}" if self.messages else ", nothing to do")
        s = f"{self.kind} {self.name!r} {self.status}: {count(self.n_rows, 'row')}, {count(self.n_topics, 'topic')}"
        if self.n_dropped_duplicates:
            s += f", {self.n_dropped_duplicates} duplicate document line(s) dropped (kept the first occurrence)"
        for m in self.messages:
            s += f"\n  note: {m}"
        return s


@dataclass(frozen=True)
class Stored:
    """What identifies a stored run or qrels set: its content (``sha256``; ``file_sha256``, the
    hash of its files as given, identifies rows stored before migration 0010 too), the format it
    was read in and, for a qrels set, its declared gains. Options that change what the content
    means are part of the identity: the same file with other gains is another qrels set."""

    id: int
    sha256: str
    file_sha256: str | None
    format: str
    gains: str | None = None

    def same(self, g: Group, fmt: str, gains: str | None = None) -> bool:
        content = g.sha == self.sha256 or (g.file_sha is not None and g.file_sha == self.file_sha256)
        return content and fmt == self.format and gains == self.gains

    def difference(self, g: Group, fmt: str, gains: str | None = None) -> str:
        """What differs from ``g`` (for the message that asks for --replace)."""
        if not (g.sha == self.sha256 or (g.file_sha is not None and g.file_sha == self.file_sha256)):
            return f"different content (sha256 {self.sha256[:12]} vs {g.sha[:12]})"
        if fmt != self.format:
            return f"the same content read as another format ({self.format} vs {fmt})"
        return f"the same content with other declared gains ({self.gains or 'none'} vs {gains or 'none'})"


def stored_identities(con, kind: str, names: Sequence[str]) -> dict[str, Stored]:
    """``{name: Stored}`` of the runs (``kind='run'``) or qrels sets ``names`` already stored."""
    if kind == "run":
        sql = "SELECT name, run_id, sha256, file_sha256, format, NULL FROM run_meta WHERE name IN (SELECT unnest(?))"
    else:
        sql = (
            "SELECT name, qrels_id, sha256, file_sha256, format, default_gains FROM qrels_meta "
            "WHERE name IN (SELECT unnest(?))"
        )
    return {r[0]: Stored(*r[1:]) for r in con.execute(sql, [list(names)]).fetchall()}


def _replaced(store: StoreHandle, kind: str, name: str) -> list[str]:
    """Drop the analyses that read the old content of a run or qrels set being replaced; a note."""
    ids = analyses_reading(store, kind, [name])
    drop_analyses(store, ids)
    return (
        [f"dropped {len(ids)} stored analysis(es) that read the old content (ids {', '.join(map(str, ids))})"]
        if ids
        else []
    )


def _stale_fusions(con, run_id: int) -> list[str]:
    """A note naming the fused runs made from a run being replaced (they are stale now)."""
    names = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT m.name FROM fusion_inputs i JOIN run_meta m ON m.run_id = i.run_id "
            "WHERE i.input_id = ? AND m.run_id <> ? ORDER BY m.name",
            [run_id, run_id],
        ).fetchall()
    ]
    if not names:
        return []
    return [
        f"the fused run(s) {', '.join(names)} were made from its old content and are stale now "
        f"(evalstore fuse --refresh --name {names[0]} makes one again)"
    ]


def source_text(files: Sequence[str]) -> str:
    """What ``run_meta.source`` / ``qrels_meta.source`` say of where a set came from: its files,
    or ``<dict>`` (given in memory)."""
    return ",".join(files) or "<dict>"


def run_meta_row(
    store: StoreHandle,
    g: Group,
    n_rows: int,
    n_topics: int,
    n_dropped: int,
    replace: bool,
    fmt: str,
    old: Stored | None,
    unit: str = "ranking",
) -> tuple[int | None, IngestResult]:
    """Add (or, with ``replace``, update) the ``run_meta`` row of the run ``g`` (``unit``: 'ranking',
    or 'answers' for generated answers), dropping a replaced run's rows, answers, scores and the
    analyses that read it. Returns ``(run_id, result)``; run_id is None when the same content is
    already stored under the name (nothing to do)."""
    con = store.con
    files = g.sources
    if old and old.same(g, fmt):
        return None, IngestResult("run", g.final, "unchanged", files)
    if old and not replace:
        raise IngestError(
            f"a run named {g.name!r} already exists with {old.difference(g, fmt)}",
            file=", ".join(files),
            expected="--replace to replace it, or --name to store this file under another name",
        )
    source = source_text(files)
    notes: list[str] = []
    if old:
        run_id = old.id
        # (the recipe of a fused run and the header of the old content go with it)
        for table in CONTENT_TABLES:
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        con.execute(
            """UPDATE run_meta SET tag = ?, source = ?, format = ?, sha256 = ?, file_sha256 = ?, n_topics = ?,
                       n_rows = ?, n_dropped_duplicates = ?, ingested_at = current_timestamp,
                       metadata = NULL, metadata_header = NULL, line_format = NULL, unit = ? WHERE run_id = ?""",
            [g.tag, source, fmt, g.sha, g.file_sha, n_topics, n_rows, n_dropped, unit, run_id],
        )
        notes = _replaced(store, "run", g.final) + _stale_fusions(con, run_id)
        status = "replaced"
    else:
        run_id = con.execute(
            """INSERT INTO run_meta (name, tag, source, format, sha256, file_sha256, n_topics, n_rows,
                                n_dropped_duplicates, unit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
            [g.name, g.tag, source, fmt, g.sha, g.file_sha, n_topics, n_rows, n_dropped, unit],
        ).fetchall()[0][0]
        status = "added"
    res = IngestResult(
        "run",
        g.final,
        status,
        files,
        n_rows=n_rows,
        n_topics=n_topics,
        n_dropped_duplicates=n_dropped,
        messages=notes,
    )
    return int(run_id), res


def store_runs(
    store: StoreHandle,
    st: Staging,
    groups: Sequence[Group],
    gstats: dict,
    dups: dict,
    replace: bool,
    fmt: str,
    rank_sql: str,
) -> dict[int, IngestResult]:
    """Store the staged runs ``groups`` (rows ranked in SQL by ``rank_sql``)."""
    con = store.con
    existing = stored_identities(con, "run", [g.final for g in groups])
    results: dict[int, IngestResult] = {}
    mapping: list[tuple[int, int]] = []
    for g in groups:
        n_rows, n_topics = gstats.get(g.idx, (0, 0))
        run_id, res = run_meta_row(store, g, n_rows, n_topics, dups.get(g.idx, 0), replace, fmt, existing.get(g.final))
        results[g.idx] = res
        if run_id is None:
            continue
        mapping.append((g.idx, run_id))
        if len(g.files) > 1:
            res.messages += _empty_files_note(st, g)
    if mapping:
        _insert_staged(st, mapping, gstats, rank_sql)
    return results


def store_read_run(
    store: StoreHandle, g: Group, n_rows: int, n_topics: int, replace: bool, fmt: str, old: Stored | None
) -> tuple[int | None, IngestResult]:
    """The ``run_meta`` row of a run whose rows the fast reader read, checked and ranked (``old``:
    what is stored under its name); its rows go in with :func:`insert_read_rows`. Returns ``(run_id,
    result)`` (run_id None: unchanged)."""
    return run_meta_row(store, g, n_rows, n_topics, 0, replace, fmt, old)


def insert_read_rows(con, parts: Sequence[tuple[int, Any]]) -> None:
    """Insert the rows of runs read by the fast reader (``(run_id, Arrow table topic, doc,
    submitted_rank, score, ln, rank)`` pairs) in one statement: a statement of a million rows or
    more is written as whole row groups (not through the write-ahead log)."""
    import numpy as np
    import pyarrow as pa

    table = pa.concat_tables(
        t.append_column("run_id", pa.array(np.full(t.num_rows, run_id, np.int32))) for run_id, t in parts
    )
    # (a relation over the table, not a registered view: a view's scan keeps the Arrow buffers alive
    # until the transaction ends, so the call's memory would grow with its runs). On one thread: the
    # reader threads keep the cores busy meanwhile, and DuckDB's parallel append costs 40 % more CPU
    # (measured: 0.52 against 0.37 CPU-s per million rows into a store file)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    con.execute("SET threads = 1")
    try:
        con.from_arrow(table).select("run_id, topic, doc, rank, ln, submitted_rank, score").insert_into("run_row_data")
    except BaseException:
        # the insert's own error is the one to report (a full disk is an IOException): setting the
        # threads back in the transaction it aborted fails with "the transaction is aborted", which
        # read as a conflict with another connection (exit 3 instead of 5)
        with contextlib.suppress(duckdb.Error):
            con.execute(f"SET threads = {int(threads)}")
        raise
    con.execute(f"SET threads = {int(threads)}")


class ReadRows:
    """Rows of runs the fast reader read, inserted about :data:`INSERT_ROWS` at a time (so that a
    run's parts do not wait in memory), until :meth:`flush`; :meth:`discard` takes a run's rows back
    (pending and inserted) when the rest of its file went to the general reader."""

    def __init__(self, con) -> None:
        self.con = con
        self.parts: list[tuple[int, Any]] = []
        self.n_rows = 0

    def add(self, run_id: int, table: Any) -> None:
        self.parts.append((run_id, table))
        self.n_rows += table.num_rows
        if self.n_rows >= INSERT_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            insert_read_rows(self.con, self.parts)
        self.parts, self.n_rows = [], 0

    def discard(self, run_id: int) -> None:
        self.parts = [(r, t) for r, t in self.parts if r != run_id]
        self.n_rows = sum(t.num_rows for _, t in self.parts)
        self.con.execute("DELETE FROM run_row_data WHERE run_id = ?", [run_id])


def new_run_ids(con, n: int) -> list[int]:
    """``n`` new run ids from the store's sequence, in one statement (an id drawn and not used, a
    declined file's, leaves a gap: ids only tell runs apart)."""
    if n == 0:
        return []
    return [int(r[0]) for r in con.execute("SELECT nextval('run_id_seq') FROM range(?)", [n]).fetchall()]


def insert_run_meta(con, runs: Sequence[tuple[int, Group, IngestResult, Any]], fmt: str) -> None:
    """The ``run_meta`` rows of new runs whose rows the fast reader stored, in one statement:
    ``(run_id, group, result, ir_metadata header or None)`` each (the group's hashes and the
    result's counts known by now)."""
    cols: list[list[Any]] = [[] for _ in range(11)]
    for run_id, g, res, header in runs:
        meta = (header.json(), header.text) if header is not None else (None, None)
        values = [run_id, g.final, g.tag, source_text(g.sources), fmt, g.sha, g.file_sha, res.n_topics,
                  res.n_rows, *meta]  # fmt: skip
        for c, v in zip(cols, values):
            c.append(v)
    con.execute(
        """INSERT INTO run_meta (run_id, name, tag, source, format, sha256, file_sha256, n_topics, n_rows,
                                 metadata, metadata_header)
           SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]),
                  unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::INTEGER[]),
                  unnest(?::BIGINT[]), unnest(?::JSON[]), unnest(?::VARCHAR[])""",
        cols,
    )


def set_read_identity(con, run_id: int, g: Group, n_rows: int, n_topics: int) -> None:
    """The identity and counts of a run whose rows the fast reader stored as it read them (its
    ``run_meta`` row was written before the hashes and counts were known)."""
    con.execute(
        "UPDATE run_meta SET sha256 = ?, file_sha256 = ?, n_rows = ?, n_topics = ? WHERE run_id = ?",
        [g.sha, g.file_sha, n_rows, n_topics, run_id],
    )


def _empty_files_note(st: Staging, g: Group) -> list[str]:
    """A note on the empty res files of a run made of per-topic files."""
    empty = [
        f.topic
        for f in g.files
        if f.topic is not None
        and not st.con.execute(f"SELECT 1 FROM {st.rows} WHERE file_idx = ? LIMIT 1", [f.idx]).fetchall()
    ]
    if not empty:
        return []
    return [
        f"{len(empty)} empty res file(s) (no documents for topic(s) "
        f"{', '.join(empty[:5])}{' ...' if len(empty) > 5 else ''})"
    ]


def _insert_staged(st: Staging, mapping: list[tuple[int, int]], gstats: dict, rank_sql: str) -> None:
    """Insert the staged rows of the groups ``mapping`` ((group, run_id) pairs), ranked in SQL."""
    con = st.con
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.ids} AS SELECT unnest(?)::INTEGER AS grp, unnest(?)::INTEGER AS id",
        [[m[0] for m in mapping], [m[1] for m in mapping]],
    )
    # A few runs per statement (about a million rows): the ranking window partitions by run
    # anyway, and its sort buffers then stay a fraction of the whole call's rows.
    chunks: list[list[int]] = [[]]
    n = 0
    for grp, _ in mapping:
        if n >= RANK_CHUNK_ROWS:
            chunks.append([])
            n = 0
        chunks[-1].append(grp)
        n += gstats.get(grp, (0, 0))[0]
    for chunk in chunks:
        con.execute(
            f"""
            INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
            SELECT id, topic, doc, {rank_sql}, ln, submitted_rank, score
            FROM {st.rows} JOIN {st.ids} USING (grp) WHERE grp IN (SELECT unnest(?::INTEGER[]))""",
            [chunk],
        )


@dataclass(frozen=True)
class QrelsMeta:
    """A qrels set's ``qrels_meta`` row (its name, where it came from, its identity and counts)."""

    name: str
    source: str
    format: str
    sha256: str
    file_sha256: str | None
    n_topics: int
    n_judged: int
    max_grade: int | None
    default_gains: str | None
    kind: str = "judgments"  # or 'nuggets' (nugget assignments), 'support' (citation support labels)
    nuggets_id: int | None = None  # an assignment set's nugget set


def write_qrels_meta(con, meta: QrelsMeta, qrels_id: int | None = None) -> int:
    """Add the ``qrels_meta`` row of a new qrels set, or (``qrels_id``) rewrite a replaced set's: the
    one writer of ``qrels_meta``, for ingested sets and subsamples alike. Returns the qrels_id."""
    values = [meta.source, meta.format, meta.sha256, meta.file_sha256, meta.n_topics, meta.n_judged,
              meta.max_grade, meta.default_gains, meta.kind, meta.nuggets_id]  # fmt: skip
    if qrels_id is not None:
        con.execute(
            """UPDATE qrels_meta SET source = ?, format = ?, sha256 = ?, file_sha256 = ?, n_topics = ?, n_judged = ?,
                       max_grade = ?, default_gains = ?, kind = ?, nuggets_id = ?, ingested_at = current_timestamp
               WHERE qrels_id = ?""",
            [*values, qrels_id],
        )
        return qrels_id
    return int(
        con.execute(
            """INSERT INTO qrels_meta (name, source, format, sha256, file_sha256, n_topics, n_judged, max_grade,
                             default_gains, kind, nuggets_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               RETURNING qrels_id""",
            [meta.name, *values],
        ).fetchall()[0][0]
    )


#: The tables holding a qrels set's judgments and the scores computed with it.
QRELS_CONTENT_TABLES = (
    "qrels_data", "subtopic_qrels_data", "subtopic_probs", "assigned_answer_data", "assignment_data", "support_data",
    "score_data",
    "evaluations",
)  # fmt: skip


def clear_qrels(con, qrels_ids: Sequence[int], tables: Sequence[str] = QRELS_CONTENT_TABLES) -> None:
    """Delete the judgments of the qrels sets and the scores computed with them."""
    ids = ", ".join(str(int(q)) for q in qrels_ids)
    for table in tables:
        con.execute(f"DELETE FROM {table} WHERE qrels_id IN ({ids})")


def store_qrels(
    store: StoreHandle,
    st: Staging,
    g: Group,
    gstat: tuple,
    fmt: str,
    replace: bool,
    gains: str | None,
    subtopics: bool = False,
    probs: Sequence[tuple[str, str, float]] | None = None,
) -> IngestResult:
    """Store one qrels set. ``subtopics``: the staged rows carry a subtopic column (diversity
    judgments): they go to subtopic_qrels_data, and qrels_data gets one row per (topic, doc) with
    the highest grade over its subtopics; ``probs``: the intent probabilities (topic, subtopic, prob)."""
    n_rows, n_topics, max_grade = gstat
    con = store.con
    meta = QrelsMeta(g.final, source_text(g.sources), fmt, g.sha, g.file_sha, n_topics, n_rows, max_grade, gains)
    qid, res = qrels_meta_row(store, g, meta, replace)
    if qid is None:
        return res
    if subtopics:
        con.execute(
            "INSERT INTO qrels_data (qrels_id, topic, doc, grade) "
            f"SELECT ?, topic, doc, max(grade) FROM {st.rows} WHERE grp = ? GROUP BY topic, doc ORDER BY topic, doc",
            [qid, g.idx],
        )
        con.execute(
            "INSERT INTO subtopic_qrels_data (qrels_id, topic, subtopic, doc, grade) "
            f"SELECT ?, topic, subtopic, doc, grade FROM {st.rows} WHERE grp = ? ORDER BY topic, subtopic, doc",
            [qid, g.idx],
        )
        if probs:
            con.execute(
                "INSERT INTO subtopic_probs (qrels_id, topic, subtopic, prob) "
                "SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::DOUBLE[])",
                [qid, [p[0] for p in probs], [p[1] for p in probs], [p[2] for p in probs]],
            )
    else:
        con.execute(
            "INSERT INTO qrels_data (qrels_id, topic, doc, grade) "
            f"SELECT ?, topic, doc, grade FROM {st.rows} WHERE grp = ? ORDER BY topic, doc",
            [qid, g.idx],
        )
    return res


def qrels_meta_row(store: StoreHandle, g: Group, meta: QrelsMeta, replace: bool) -> tuple[int | None, IngestResult]:
    """Add (or, with ``replace``, rewrite) the ``qrels_meta`` row of the judged set ``g`` of any kind
    (relevance judgments, nugget assignments, support labels), clearing a replaced set's labels,
    scores and the analyses that read it. Returns ``(qrels_id, result)``; qrels_id is None when the
    same content is already stored under the name (nothing to do)."""
    con = store.con
    files = g.sources
    old = stored_identities(con, "qrels", [g.final]).get(g.final)
    if old and old.same(g, meta.format, meta.default_gains):
        return None, IngestResult("qrels", g.final, "unchanged", files)
    if old and not replace:
        raise IngestError(
            f"a qrels set named {g.name!r} already exists with {old.difference(g, meta.format, meta.default_gains)}",
            file=meta.source,
            expected="--replace to replace it, or --name to store it under another name",
        )
    notes: list[str] = []
    if old:
        qid = old.id
        check_replaceable_qrels(con, g.final, qid)
        clear_qrels(con, [qid])
        write_qrels_meta(con, meta, qid)
        notes = _replaced(store, "qrels", g.final)
        status = "replaced"
    else:
        qid = write_qrels_meta(con, meta)
        status = "added"
    res = IngestResult("qrels", g.final, status, files, n_rows=meta.n_judged, n_topics=meta.n_topics, messages=notes)
    return qid, res

"""Writing parsed and checked rows to the store: run_meta / run_row_data and qrels_meta /
qrels_data, the replace rules, and the result of an ingest call.

Called inside the store's transaction (see :meth:`evalstore.Store.transaction`): either every run
or set of a call is stored, or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import IngestError
from .checks import check_replaceable_qrels
from .staging import Group, Staging

RANK_CHUNK_ROWS = 1_000_000


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
            return (
                f"{self.kind} {self.name!r}: identical content already stored under this name "
                f"(same sha256), nothing to do"
            )
        s = f"{self.kind} {self.name!r} {self.status}: {self.n_rows} rows, {self.n_topics} topics"
        if self.n_dropped_duplicates:
            s += f", {self.n_dropped_duplicates} duplicate document line(s) dropped (kept the first occurrence)"
        for m in self.messages:
            s += f"\n  note: {m}"
        return s


def store_runs(
    store, st: Staging, groups: Sequence[Group], gstats: dict, dups: dict, replace: bool, fmt: str, rank_sql: str
) -> dict[int, IngestResult]:
    con = store.con
    existing = {
        r[0]: (r[1], r[2])
        for r in con.execute(
            "SELECT name, run_id, sha256 FROM run_meta WHERE name IN (SELECT unnest(?))", [[g.name for g in groups]]
        ).fetchall()
    }
    results: dict[int, IngestResult] = {}
    mapping: list[tuple[int, int]] = []
    for g in groups:
        files = g.sources
        n_rows, n_topics = gstats.get(g.idx, (0, 0))
        old = existing.get(g.name)
        if old and old[1] == g.sha:
            results[g.idx] = IngestResult("run", g.final, "unchanged", files)
            continue
        if old and not replace:
            raise IngestError(
                f"a run named {g.name!r} already exists with different content (sha256 {old[1][:12]} vs {g.sha[:12]})",
                file=", ".join(files),
                expected="--replace to replace it, or --name to store this file under another name",
            )
        source = ",".join(files) or "<dict>"
        n_dropped = dups.get(g.idx, 0)
        if old:
            run_id = old[0]
            for table in ("run_row_data", "score_data", "evaluations"):
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            con.execute(
                """UPDATE run_meta SET tag = ?, source = ?, format = ?, sha256 = ?, n_topics = ?, n_rows = ?,
                           n_dropped_duplicates = ?, ingested_at = current_timestamp WHERE run_id = ?""",
                [g.tag, source, fmt, g.sha, n_topics, n_rows, n_dropped, run_id],
            )
            status = "replaced"
        else:
            run_id = con.execute(
                """INSERT INTO run_meta (name, tag, source, format, sha256, n_topics, n_rows,
                                    n_dropped_duplicates) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
                [g.name, g.tag, source, fmt, g.sha, n_topics, n_rows, n_dropped],
            ).fetchall()[0][0]
            status = "added"
        mapping.append((g.idx, run_id))
        res = IngestResult(
            "run", g.final, status, files, n_rows=n_rows, n_topics=n_topics, n_dropped_duplicates=n_dropped
        )
        if len(g.files) > 1:
            empty = [
                f.topic
                for f in g.files
                if f.topic is not None
                and not con.execute(f"SELECT 1 FROM {st.rows} WHERE file_idx = ? LIMIT 1", [f.idx]).fetchall()
            ]
            if empty:
                res.messages.append(
                    f"{len(empty)} empty res file(s) (no documents for topic(s) "
                    f"{', '.join(empty[:5])}{' ...' if len(empty) > 5 else ''})"
                )
        results[g.idx] = res
    if mapping:
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
    return results


def store_qrels(
    store,
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
    con = store.con
    files = g.sources
    source = ",".join(files) or "<dict>"
    n_rows, n_topics, max_grade = gstat
    existing = con.execute("SELECT qrels_id, sha256 FROM qrels_meta WHERE name = ?", [g.name]).fetchall()
    if existing and existing[0][1] == g.sha:
        return IngestResult("qrels", g.final, "unchanged", files)
    if existing and not replace:
        raise IngestError(
            f"a qrels set named {g.name!r} already exists with different content "
            f"(sha256 {existing[0][1][:12]} vs {g.sha[:12]})",
            file=source,
            expected="--replace to replace it, or --name to store it under another name",
        )
    if existing:
        qid = existing[0][0]
        check_replaceable_qrels(con, g.final, qid)
        for table in ("qrels_data", "subtopic_qrels_data", "subtopic_probs", "score_data", "evaluations"):
            con.execute(f"DELETE FROM {table} WHERE qrels_id = ?", [qid])
        con.execute(
            """UPDATE qrels_meta SET source = ?, format = ?, sha256 = ?, n_topics = ?, n_judged = ?,
                       max_grade = ?, default_gains = ?, ingested_at = current_timestamp WHERE qrels_id = ?""",
            [source, fmt, g.sha, n_topics, n_rows, max_grade, gains, qid],
        )
        status = "replaced"
    else:
        qid = con.execute(
            """INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade,
                             default_gains) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING qrels_id""",
            [g.name, source, fmt, g.sha, n_topics, n_rows, max_grade, gains],
        ).fetchall()[0][0]
        status = "added"
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
    return IngestResult("qrels", g.final, status, files, n_rows=n_rows, n_topics=n_topics)

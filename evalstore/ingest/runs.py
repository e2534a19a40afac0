"""Ingesting run files: which files form which run, how a run is named, and the call's steps
(read into the staging tables, check, store in one transaction)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..db.run_kinds import DEFAULT as DEFAULT_KIND
from ..db.run_kinds import check_kinds, set_kind
from ..errors import IngestError
from . import fast, readers
from .checks import (
    drop_duplicates,
    duplicate_error,
    duplicates,
    group_stats,
    validate_call,
)
from .dicts import run_from_dict
from .files import (
    compression,
    expand_paths,
    fields,
    first_content_line,
    materialized,
    physical_line,
)
from .formats import INPUT_FORMATS, LINE_KINDS, RUN_COLUMNS, run_stem, topic_from_name
from .ir_metadata import Header, read_header, save_headers
from .pipeline import IngestCall, empty_call_error
from .prefetch import prefetched
from .run_text import LineFormat, ReadCheck, keep_read_formats, keep_run_text
from .sources import is_path
from .staging import Group, SourceFile, Staging
from .write import (
    IngestResult,
    ReadRows,
    insert_run_meta,
    new_run_ids,
    set_read_identity,
    store_read_run,
    store_runs,
    stored_identities,
)

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def ingest_runs(
    store: StoreHandle,
    paths,
    *,
    name: str | None = None,
    format: str = "trec",
    replace: bool = False,
    dedupe: bool = False,
    name_from: str = "tag",
    progress: bool | None = None,
    kind: str | None = None,
) -> list[IngestResult]:
    """Ingest run files: one run per TREC file (named ``name``, else by its tag, or by the file name
    with ``name_from='file'``). With ``format='ntcir'`` files whose lines hold one field are
    NTCIREVAL res files (one per topic, topic = file name up to its first dot) and together form
    one run named ``name``.

    ``kind``: what the runs are (``submitted``, the default of a new run, or ``scratch``; see
    :mod:`evalstore.db.run_kinds`); given, it is set on runs whose content is already stored too.

    All files are stored in one transaction: any error stores nothing."""
    validate_call(store, format)
    if kind is not None:
        check_kinds(kind)
    if not is_path(paths):  # a DataFrame, an Arrow table, namedtuples or a dict: one run
        if not name:
            raise IngestError("a run given as a DataFrame, table or dict needs a name (name=...)")
        with store.transaction():
            results = [run_from_dict(store, name, paths, replace=replace, source=f"<{type(paths).__name__}>")]
            mark_kinds(store, results, kind)
        return results
    if name_from not in ("tag", "file"):
        raise IngestError(f"name_from must be 'tag' or 'file', not {name_from!r}")
    if name is not None and not name.strip():
        raise IngestError("the run name is empty")
    with materialized(expand_paths(paths)) as inputs:
        with store.transaction():
            results = RunIngest(store, inputs, name, format, replace, dedupe, name_from, progress).run()
            mark_kinds(store, results, kind)
        return results


def mark_kinds(store: StoreHandle, results: Sequence[IngestResult], kind: str | None) -> None:
    """Runs newly stored are ``kind`` (default ``submitted``; a replaced fused run is no longer
    fused); a run whose content was already stored takes ``kind`` when one is given."""
    stored = [r.name for r in results if r.status != "unchanged"]
    if stored:
        set_kind(store, stored, kind or DEFAULT_KIND)
    if kind is not None:
        unchanged = [r for r in results if r.status == "unchanged"]
        changed = set(set_kind(store, [r.name for r in unchanged], kind)) if unchanged else set()
        for r in unchanged:
            if r.name in changed:
                r.messages.append(f"now a {kind} run")


class RunIngest(IngestCall):
    """The hooks of a run ingest call: runs named by their tags (or given names, or file names), the
    fast reader for cleanly delimited files, NTCIR res files forming one run, ``--dedupe``."""

    kind = what = "run"
    staging = "runs"
    columns = RUN_COLUMNS
    stats_extra = ", min(tag), max(tag), count(DISTINCT topic)"
    empty_what = "run lines"

    def __init__(self, store, inputs, name, format, replace, dedupe, name_from, progress, con=None) -> None:
        super().__init__(store, format, replace, progress, con)
        self.inputs, self.name, self.dedupe, self.name_from = inputs, name, dedupe, name_from
        self.per_topic = False
        self._notes: dict[int, list[str]] = {}  # notes of runs whose fast read was taken back
        self.headers: dict[int, Header] = {}  # the files' ir_metadata blocks, by group
        self.saved_headers: set[int] = set()  # groups whose header went in with their run_meta row
        self.groups: list[Group] = []
        self.read_formats: dict[int, LineFormat] = {}  # groups whose line format the fast read checked
        self.refuted: dict[int, LineFormat] = {}  # groups whose learnt format the fast read found wrong

    def plan(self) -> list[Group]:
        self.files, groups, self.per_topic = _plan(self.inputs, self.name, self.format, self.name_from)
        self.groups = groups
        if not self.per_topic:  # a malformed ir_metadata header is an error before anything is read
            self.headers = {g.idx: h for g in groups if (h := read_header(g.files[0].path, g.files[0].name))}
        return groups

    def run(self) -> list[IngestResult]:
        """The call (:meth:`IngestCall.run`), and the runs' ir_metadata headers kept in the same
        transaction (``runs.metadata``; the block's text for ``export run``)."""
        with self.store.transaction():
            results = super().run()
            unsaved = {i: h for i, h in self.headers.items() if i not in self.saved_headers}
            save_headers(self.store, self.results, unsaved)
            self.keep_texts()
        return results

    def keep_texts(self) -> None:
        """Keep what gives each new one-file run back byte for byte (:mod:`evalstore.ingest.run_text`)."""
        if self.per_topic:
            return
        kept = {r.name: g for g in self.groups if (r := self.results.get(g.idx)) and r.status != "unchanged"}
        ids = dict(
            self.store.con.execute(
                "SELECT name, run_id FROM run_meta WHERE name IN (SELECT unnest(?::VARCHAR[]))", [list(kept)]
            ).fetchall()
        )
        keep_read_formats(
            self.store, {ids[n]: self.read_formats[g.idx] for n, g in kept.items() if g.idx in self.read_formats}
        )
        for name, g in kept.items():
            if g.idx in self.read_formats or len(g.files) != 1:
                continue
            run_id, sha = self.store.con.execute(
                "SELECT run_id, sha256 FROM run_meta WHERE run_id = ?", [ids[name]]
            ).fetchall()[0]
            header = self.headers.get(g.idx)
            text = header.text if header else None
            keep_run_text(self.store, run_id, g.files[0].path, sha, text, self.refuted.get(g.idx))

    def known_name(self, g: Group) -> str | None:
        return g.name or g.guess

    def early_names(self, todo: list[Group]) -> list[Group]:
        # the fast reader's runs: their tag is every line's (else the general reader names them)
        return [] if self.per_topic else [g for g in todo if g.files[0].delim and self.known_name(g)]

    def allow_empty(self) -> bool:
        return self.per_topic

    def read_fast(self, todo: list[Group], bar) -> list[Group]:
        """Cleanly delimited files: read, checked and ranked block by block (:mod:`evalstore.ingest.fast`)
        and stored as they are read, a million rows at a time; the files it declines go to the general
        reader (their rows stored so far are taken back). The ``run_meta`` rows of new runs are
        written in one statement at the end, with their hashes and counts (their ids drawn from the
        sequence first): no statement per file."""
        readable = [] if self.per_topic else [g for g in todo if g.files[0].delim]
        stored = stored_identities(self.con, "run", [nm for g in readable if (nm := self.known_name(g))])
        fresh = [g for g in readable if str(self.known_name(g)) not in stored]
        ids = iter(new_run_ids(self.con, len(fresh)))
        new_ids = {g.idx: next(ids) for g in fresh}
        rows = ReadRows(self.con)
        declined, added = [], []
        for g, parts in zip(readable, prefetched([functools.partial(_parts, g) for g in readable])):
            bar.advance(1)
            old = stored.get(str(self.known_name(g)))
            if not self._store_parts(g, parts, rows, old, new_ids.get(g.idx)):
                declined.append(g)
            elif g.idx in new_ids and g.idx in self.results:
                added.append(g)
        rows.flush()
        if added:
            self.saved_headers = {g.idx for g in added if g.idx in self.headers}
            insert_run_meta(self.con, [(new_ids[g.idx], g, self.results[g.idx], self.headers.get(g.idx))
                                       for g in added], self.format)  # fmt: skip
        return [g for g in todo if g not in readable] + declined

    def _store_parts(
        self, g: Group, parts: Iterator[fast.Part | fast.RunReader], rows: ReadRows, old, new_id: int | None
    ) -> bool:
        """Store one run's parts as they come; False (nothing of it kept) when its file is declined.
        A new run's rows go in under ``new_id`` (its ``run_meta`` row is written at the end); a stored
        one's (``old``) replace it."""
        before = (g.name, g.tag, g.sha, g.file_sha)
        f = g.files[0]
        g.tag, g.name = f.tag0, g.name or f.tag0
        if not g.sha:  # a new name: the identity is known once the file is read
            g.sha = g.file_sha = ""
        run_id: int | None = None
        check: ReadCheck | None = None
        try:
            for part in parts:
                if isinstance(part, fast.RunReader):  # the end: the file's identity and counts
                    g.sha, g.file_sha = str(part.sha), part.file_sha
                    if check is not None and (fmt := check.verified(g.sha, part.blocks)) is not None:
                        self.read_formats[g.idx] = fmt
                    elif check is not None and check.refuted is not None:
                        self.refuted[g.idx] = check.refuted
                    if run_id is not None:
                        if old is not None:
                            set_read_identity(self.con, run_id, g, part.n_rows, part.n_topics)
                        res = self.results[g.idx]
                        res.n_rows, res.n_topics = part.n_rows, part.n_topics
                    return True
                if run_id is None:
                    if old is None:
                        assert new_id is not None  # a new run's id was drawn before reading
                        run_id = new_id
                        self.results[g.idx] = IngestResult("run", g.final, "added", g.sources)
                    else:
                        run_id, self.results[g.idx] = store_read_run(
                            self.store, g, 0, 0, self.replace, self.format, old
                        )
                        if run_id is None:  # the same content is stored (its hash was taken first)
                            return True
                if check is None:  # (made once the file's first part was read: its first lines are readable)
                    header = self.headers.get(g.idx)
                    check = ReadCheck(self.con, f.path, header.text if header else None, f.delim, f.tag0)
                check.add(part.table)
                # (the fields' text as read is the check's only: not held until the rows are written)
                texts = [c for c in fast.TEXT_COLUMNS if c in part.table.column_names]
                rows.add(run_id, part.table.drop_columns(texts))
        except fast.Declined:
            if run_id is not None:
                rows.discard(run_id)
                if old is not None:
                    self._take_back(run_id, g, old)
                else:
                    self.results.pop(g.idx)
            g.name, g.tag, g.sha, g.file_sha = before
            return False
        raise AssertionError("internal: a run file's parts ended without its summary")

    def _take_back(self, run_id: int, g: Group, old) -> None:
        """A declined file's ``run_meta`` row of a stored run: left for the general reader to replace
        with its own identity (its note of dropped analyses kept)."""
        res = self.results.pop(g.idx)
        self.con.execute("UPDATE run_meta SET sha256 = '', file_sha256 = NULL WHERE run_id = ?", [run_id])
        self._notes[g.idx] = res.messages

    def after_group(self, st: Staging, stats: dict[int, tuple], g: Group) -> None:
        if not self.per_topic:
            name_run(st, g, stats[g.idx])

    def after_read(self, st: Staging, stats: dict[int, tuple], todo: list[Group]) -> None:
        todo_files = [f for g in todo for f in g.files]
        if self.per_topic and not any(stats.get(f.idx, (0,))[0] for f in todo_files):
            raise empty_call_error(todo_files)

    def duplicates(self, st: Staging, todo: list[Group]) -> dict[int, int]:
        dups = duplicates(st)
        if dups and not self.dedupe:
            g = next(g for g in todo if g.idx in dups)
            raise duplicate_error(
                st,
                g,
                self.files,
                "duplicate document {doc!r} in topic {topic!r} (first seen on {where})",
                "each docno at most once per topic; pass --dedupe to keep the first "
                "occurrence (trec_eval refuses runs with duplicate documents)",
            )
        if dups:
            drop_duplicates(st, list(dups))
        return dups

    def store_staged(
        self, st: Staging, todo: list[Group], stats: dict[int, tuple], dups: dict[int, int]
    ) -> dict[int, IngestResult]:
        if self.per_topic or dups:
            gstats = group_stats(st)
        else:  # one file per run: the file's counts
            gstats = {g.idx: (stats[g.idx][0], stats[g.idx][5]) for g in todo}
        rank_sql = self.files[0].line_kind.rank_sql
        results = store_runs(self.store, st, todo, gstats, dups, self.replace, self.format, rank_sql)
        for idx, notes in self._notes.items():
            if idx in results:
                results[idx].messages[:0] = notes
        return results


def _parts(g: Group) -> Iterator[fast.Part | fast.RunReader]:
    """The parts of a one-file run as the fast reader reads them, then the reader (its hashes and
    counts); :class:`~evalstore.ingest.fast.Declined` when the general reader must read the file."""
    f = g.files[0]
    reader = fast.RunReader(f.path, f.compression, str(f.delim), f.tag0, keep_text=True)
    yield from reader.parts()
    yield reader


def _plan(
    paths: Sequence[Path], name: str | None, format: str, name_from: str
) -> tuple[list[SourceFile], list[Group], bool]:
    """The call's files and the runs they form, named where the name is known before reading;
    and whether the files are per-topic files (NTCIREVAL res files) forming one run."""
    files = [SourceFile(i, p, compression(p), "trec_run") for i, p in enumerate(paths)]
    firsts = {f.idx: first_content_line(f.path) for f in files}
    for f in files:
        first_line = firsts[f.idx]
        f.delim = readers.fast_delimiter(first_line)
        if f.delim and first_line is not None:
            f.tag0 = first_line.split(f.delim)[5]
    first = next((firsts[f.idx] for f in files if firsts[f.idx] is not None), None)
    line_kind = INPUT_FORMATS[format].run_line_kind(len(fields(first)) if first is not None else None)
    if LINE_KINDS[line_kind].topic_from_file:
        if not name:
            raise IngestError(
                "NTCIR res files (one per topic) form one run: give it a name with --name NAME", file=str(files[0].path)
            )
        topics: dict[str, Path] = {}
        for f in files:
            f.line_kind_name, f.topic, f.delim = line_kind, topic_from_name(f.path), None
            if f.topic in topics:
                raise IngestError(
                    f"two res files for topic {f.topic!r} (also {topics[f.topic]}); the topic of a "
                    f"res file is its name up to the first dot",
                    file=f.name,
                )
            topics[f.topic] = f.path
        return files, [Group(0, files, "", name=name)], True
    if name and len(files) > 1:
        raise IngestError(
            f"--name names one run but {len(files)} files were given; ingest them one at a "
            f"time, or let each run take its tag (or --name-from file)"
        )
    groups = []
    for f in files:
        f.grp = f.idx
        g = Group(f.idx, [f], "")
        if name:
            g.name = name
        elif name_from == "file":
            g.name = run_stem(f.path)
        else:
            flds = fields(firsts[f.idx] or "")
            g.guess = flds[5] if len(flds) >= 6 else None
        groups.append(g)
    return files, groups, False


def name_run(staging: Staging, g: Group, st: tuple) -> None:
    """Set the group's tag (and name from the tag when no name was given)."""
    con, rows = staging.con, staging.rows
    f = g.files[0]
    # the fast reader stores no tag (every line carries the first line's), so min/max are NULL
    tag_min, tag_max = (f.tag0, f.tag0) if f.delim else (st[3], st[4])
    if tag_min == tag_max:
        g.tag = tag_min
        if g.name is None:
            g.name = tag_min
        return
    tags = [
        r[0]
        for r in con.execute(
            f"SELECT DISTINCT tag FROM {rows} WHERE file_idx = ? ORDER BY tag LIMIT 6", [f.idx]
        ).fetchall()
    ]
    g.tag = ",".join(tags[:5]) + (",..." if len(tags) > 5 else "")
    if g.name is not None:
        return
    first_tag = con.execute(f"SELECT tag FROM {rows} WHERE file_idx = ? ORDER BY ln LIMIT 1", [f.idx]).fetchall()[0][0]
    ln = con.execute(f"SELECT min(ln) FROM {rows} WHERE file_idx = ? AND tag <> ?", [f.idx, first_tag]).fetchall()[0][0]
    line_no, text = physical_line(f.path, int(ln))
    raise IngestError(
        f"the file has several run tags ({', '.join(tags[:5])}{' ...' if len(tags) > 5 else ''}) and no name was "
        f"given; this line's tag differs from the first line's {first_tag!r}",
        file=f.name,
        line=line_no,
        text=text,
        expected="one tag per run file, or give the run a name with --name NAME",
    )

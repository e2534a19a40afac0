"""Ingesting qrels files: which files form which set, how a set is named, its declared gains, and
the call's steps (read into the staging tables, check, store in one transaction)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import IngestError, MetricError
from ..metrics.params import format_list, parse_gains
from ..progress import progress_bar
from . import readers
from .checks import (
    check_file,
    check_names,
    duplicate_error,
    duplicates,
    file_stats,
    group_stats,
    subtopic_duplicates,
    validate_call,
)
from .dicts import qrels_from_dict
from .files import (
    STDIN,
    combined_sha,
    compression,
    expand_paths,
    fields,
    first_content_line,
    hashes,
    materialized,
    read_intent_probs,
)
from .formats import INPUT_FORMATS, LAYOUTS, QRELS_COLUMNS, SUBTOPIC_COLUMNS, qrels_stem, topic_from_name
from .sources import is_path
from .staging import Group, SourceFile, Staging
from .write import IngestResult, store_qrels, stored_identities

if TYPE_CHECKING:
    from ..store.handle import StoreHandle


def ingest_qrels(
    store: StoreHandle,
    paths,
    *,
    name: str | None = None,
    format: str = "trec",
    replace: bool = False,
    gains: str | Sequence[float] | None = None,
    progress: bool | None = None,
    intent_probs=None,
) -> list[IngestResult]:
    """Ingest qrels file(s). Without ``name`` each file becomes a set named after the file; with
    ``name`` all files form one set (e.g. NTCIR per-topic rel files). ``gains`` declares the set's
    default gains of levels 1..n (used when a metric is given no ``gains=``).

    Diversity judgments (``format='subtopic'`` or ``'ntcir-intents'``) are stored per subtopic
    (``subtopic_qrels``) and as ordinary judgments with the highest grade over the subtopics.
    ``intent_probs``: a file of ``topic intent prob`` lines (NTCIR's intent probabilities; topics
    without lines get uniform probabilities), for those formats only.

    All files are stored in one transaction: any error stores nothing."""
    validate_call(store, format)
    if name is not None and not name.strip():
        raise IngestError("the qrels set name is empty")
    if not is_path(paths):  # a DataFrame, an Arrow table, namedtuples or a dict: one set
        if not name:
            raise IngestError("qrels given as a DataFrame, table or dict need a name (name=...)")
        return [qrels_from_dict(store, name, paths, replace=replace, source=f"<{type(paths).__name__}>")]
    declared = declared_gains(gains)
    if intent_probs is not None and not INPUT_FORMATS[format].subtopics:
        raise IngestError(
            f"intent probabilities go with diversity judgments (--format subtopic or ntcir-intents), not {format!r}"
        )
    probs = read_intent_probs(intent_probs) if intent_probs is not None else None
    given = expand_paths(paths)
    if not name and any(str(p) == STDIN for p in given):
        raise IngestError("qrels read from standard input (-) need a name: --name NAME")
    with materialized(given) as inputs:
        return _ingest(store, inputs, name, format, replace, declared, progress, probs)


def _ingest(
    store: StoreHandle,
    inputs: list,
    name: str | None,
    format: str,
    replace: bool,
    declared: str | None,
    progress: bool | None,
    probs: list[tuple[str, str, float]] | None = None,
) -> list[IngestResult]:
    subtopics = INPUT_FORMATS[format].subtopics
    files = [SourceFile(i, p, compression(p), "trec_qrels") for i, p in enumerate(inputs)]
    for f in files:
        first = first_content_line(f.path)
        f.layout_name = INPUT_FORMATS[format].qrels_layout(len(fields(first)) if first is not None else None)
        if LAYOUTS[f.layout_name].topic_from_file:
            f.topic = topic_from_name(f.path)
    shas, file_shas = hashes([f.path for f in files])
    if name:
        paths = [f.path for f in files]
        groups = [Group(0, files, combined_sha(paths, shas), name=name, file_sha=combined_sha(paths, file_shas))]
    else:
        groups = []
        for f in files:
            f.grp = f.idx
            groups.append(Group(f.idx, [f], shas[f.path], name=qrels_stem(f.path), file_sha=file_shas[f.path]))
        check_names(groups, "qrels set")

    if probs:  # the probabilities are part of the set's content
        for g in groups:
            g.sha = hashlib.sha256((g.sha + repr(sorted(probs))).encode()).hexdigest()
            g.file_sha = hashlib.sha256((str(g.file_sha) + repr(sorted(probs))).encode()).hexdigest()
    con = store.con
    stored = stored_identities(con, "qrels", [g.final for g in groups])
    results: dict[int, IngestResult] = {}
    todo = []
    for g in groups:
        if g.final in stored and stored[g.final].same(g, format, declared):
            results[g.idx] = IngestResult("qrels", g.final, "unchanged", g.sources)
        else:
            todo.append(g)
    if not todo:
        return [results[g.idx] for g in groups]
    todo_files = [f for g in todo for f in g.files]
    with Staging(con, "qrels", SUBTOPIC_COLUMNS if subtopics else QRELS_COLUMNS) as st:
        with progress_bar(len(todo_files), "reading qrels", enabled=progress, min_total=1, transient=True) as bar:
            readers.load(st, todo_files, bar)
            stats = file_stats(st)
            for f in todo_files:
                check_file(f, stats.get(f.idx), empty_what="judgments")
            dups = subtopic_duplicates(st) if subtopics else duplicates(st)
            if dups:
                g = next(g for g in todo if g.idx in dups)
                if subtopics:
                    message = (
                        "document {doc!r} is judged twice for the same subtopic of topic {topic!r} (first on {where})"
                    )
                    expected, by = "one judgment per (topic, subtopic, docno)", "topic, subtopic, doc"
                else:
                    message = "document {doc!r} is judged twice for topic {topic!r} (first on {where})"
                    expected, by = "one judgment per (topic, docno); trec_eval refuses such qrels too", "topic, doc"
                raise duplicate_error(st, g, files, message, expected, by=by, subtopic_hint=not subtopics)
            gstats = group_stats(st, ", max(grade)")
            if subtopics:  # a set's size is its judged (topic, doc) pairs
                gstats = {
                    grp: (n, *rest)
                    for grp, n, *rest in con.execute(
                        f"SELECT grp, count(DISTINCT (topic, doc)), count(DISTINCT topic), max(grade) "
                        f"FROM {st.rows} GROUP BY grp"
                    ).fetchall()
                }
            with store.transaction():
                for g in todo:
                    results[g.idx] = store_qrels(
                        store, st, g, gstats.get(g.idx, (0, 0, None)), format, replace, declared, subtopics, probs
                    )
    return [results[g.idx] for g in groups]


def declared_gains(gains: str | Sequence[float] | None) -> str | None:
    """The set's declared gains as stored (``1:3:7``), checked by the rule of ``gains=`` in metric
    names (finite, non-negative, non-decreasing)."""
    if gains is None:
        return None
    try:
        return format_list(parse_gains(gains, "gains"))
    except MetricError as e:
        raise IngestError(str(e)) from None

"""Ingesting qrels files: which files form which set, how a set is named, its declared gains, and
the call's steps (read into the staging tables, check, store in one transaction)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import IngestError, MetricError
from ..metrics.params import format_list, parse_gains
from .checks import (
    check_names,
    duplicate_error,
    duplicates,
    group_stats,
    subtopic_duplicates,
    validate_call,
)
from .dicts import qrels_from_dict
from .files import (
    STDIN,
    compression,
    expand_paths,
    fields,
    first_content_line,
    materialized,
    read_intent_probs,
)
from .formats import INPUT_FORMATS, LINE_KINDS, QRELS_COLUMNS, SUBTOPIC_COLUMNS, qrels_stem, topic_from_name
from .pipeline import IngestCall
from .sources import is_path
from .staging import Group, SourceFile, Staging
from .write import IngestResult, Stored, store_qrels

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


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
    declared = declared_gains(gains)  # checked the same way whatever the qrels are given as
    if not is_path(paths):  # a DataFrame, an Arrow table, namedtuples or a dict: one set
        if not name:
            raise IngestError("qrels given as a DataFrame, table or dict need a name (name=...)")
        if intent_probs is not None:
            raise IngestError("intent probabilities go with diversity judgments read from files, not with a dict")
        source = f"<{type(paths).__name__}>"
        return [qrels_from_dict(store, name, paths, replace=replace, source=source, gains=declared)]
    if intent_probs is not None and not INPUT_FORMATS[format].subtopics:
        raise IngestError(
            f"intent probabilities go with diversity judgments (--format subtopic or ntcir-intents), not {format!r}"
        )
    probs = read_intent_probs(intent_probs) if intent_probs is not None else None
    given = expand_paths(paths)
    if not name and any(str(p) == STDIN for p in given):
        raise IngestError("qrels read from standard input (-) need a name: --name NAME")
    with materialized(given) as inputs:
        return QrelsIngest(store, inputs, name, format, replace, declared, progress, probs).run()


class QrelsIngest(IngestCall):
    """The hooks of a qrels ingest call: a set per file (named after it) or one named set, declared
    gains and intent probabilities as part of the identity, diversity judgments per subtopic."""

    kind = "qrels"
    what = "qrels set"
    staging = "qrels"
    empty_what = "judgments"

    def __init__(self, store, inputs, name, format, replace, declared, progress, probs, con=None) -> None:
        super().__init__(store, format, replace, progress, con)
        self.inputs, self.name, self.declared, self.probs = inputs, name, declared, probs
        self.subtopics = INPUT_FORMATS[format].subtopics
        self.columns = SUBTOPIC_COLUMNS if self.subtopics else QRELS_COLUMNS

    def plan(self) -> list[Group]:
        fmt = INPUT_FORMATS[self.format]
        self.files = [SourceFile(i, p, compression(p), "trec_qrels") for i, p in enumerate(self.inputs)]
        for f in self.files:
            first = first_content_line(f.path)
            f.line_kind_name = fmt.qrels_line_kind(len(fields(first)) if first is not None else None)
            if LINE_KINDS[f.line_kind_name].topic_from_file:
                f.topic = topic_from_name(f.path)
        if self.name:
            return [Group(0, self.files, "", name=self.name)]
        groups = []
        for f in self.files:
            f.grp = f.idx
            groups.append(Group(f.idx, [f], "", name=qrels_stem(f.path)))
        check_names(groups, "qrels set")
        return groups

    def same(self, stored: Stored, g: Group) -> bool:
        return stored.same(g, self.format, self.declared)

    def after_hash(self, g: Group) -> None:
        if self.probs:  # the probabilities are part of the set's content
            g.sha = hashlib.sha256((g.sha + repr(sorted(self.probs))).encode()).hexdigest()
            g.file_sha = hashlib.sha256((str(g.file_sha) + repr(sorted(self.probs))).encode()).hexdigest()

    def duplicates(self, st: Staging, todo: list[Group]) -> dict[int, int]:
        dups = subtopic_duplicates(st) if self.subtopics else duplicates(st)
        if dups:
            g = next(g for g in todo if g.idx in dups)
            if self.subtopics:
                message = "document {doc!r} is judged twice for the same subtopic of topic {topic!r} (first on {where})"
                expected, by = "one judgment per (topic, subtopic, docno)", "topic, subtopic, doc"
            else:
                message = "document {doc!r} is judged twice for topic {topic!r} (first on {where})"
                expected, by = "one judgment per (topic, docno); trec_eval refuses such qrels too", "topic, doc"
            raise duplicate_error(st, g, self.files, message, expected, by=by, subtopic_hint=not self.subtopics)
        return dups

    def store_staged(
        self, st: Staging, todo: list[Group], stats: dict[int, tuple], dups: dict[int, int]
    ) -> dict[int, IngestResult]:
        gstats = group_stats(st, ", max(grade)")
        if self.subtopics:  # a set's size is its judged (topic, doc) pairs
            gstats = {
                grp: (n, *rest)
                for grp, n, *rest in st.con.execute(
                    f"SELECT grp, count(DISTINCT (topic, doc)), count(DISTINCT topic), max(grade) "
                    f"FROM {st.rows} GROUP BY grp"
                ).fetchall()
            }
        return {
            g.idx: store_qrels(
                self.store,
                st,
                g,
                gstats.get(g.idx, (0, 0, None)),
                self.format,
                self.replace,
                self.declared,
                self.subtopics,
                self.probs,
            )
            for g in todo
        }


def declared_gains(gains: str | Sequence[float] | None) -> str | None:
    """The set's declared gains as stored (``1:3:7``), checked by the rule of ``gains=`` in metric
    names (finite, non-negative, non-decreasing)."""
    if gains is None:
        return None
    try:
        return format_list(parse_gains(gains, "gains"))
    except MetricError as e:
        raise IngestError(str(e)) from None

"""The one skeleton of an ingest call, for runs and qrels alike; each kind fills in its hooks.

:meth:`IngestCall.run` takes every call through the same steps:

1. **plan** (hook): the call's files and the groups they form (a run or a qrels set each), named
   where the name is known before reading;
2. **identity**: the groups whose name is already stored are hashed first (content, format and,
   for qrels, declared gains) so that identical content is left alone ("unchanged"); every other
   group's hash is taken while it is read;
3. **names known before reading** are checked (valid, no two groups of the call under one name);
4. in **one transaction**: the groups the fast reader can read (hook :meth:`IngestCall.read_fast`:
   TREC runs) are read, checked, ranked and stored a million rows at a time; the rest go through
   the staging tables (:class:`~evalstore.ingest.staging.Staging`): the general reader, each file's
   first bad line, the hooks :meth:`IngestCall.after_group` (a run's tag and name) and
   :meth:`IngestCall.after_read`, every name
   checked, duplicates (hook :meth:`IngestCall.duplicates` and its message), the groups' counts and
   the hook :meth:`IngestCall.store_staged`.

Any error rolls the transaction back: either every run or set of the call is stored, or none.

Without a store, :meth:`IngestCall.parse` takes the same files through the same reader, checks and
messages on a plain DuckDB connection and leaves the checked rows in the staging tables
(:mod:`evalstore.ingest.tables` hands them on as Arrow tables).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

from ..base.progress import NO_BAR, progress_bar
from ..errors import IngestError
from . import readers
from .checks import check_file, check_names, file_stats
from .files import combined_sha, hashes
from .staging import Group, SourceFile, Staging
from .write import IngestResult, Stored, stored_identities

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


class IngestCall:
    """One ingest call of one kind (see the module docstring); subclasses give the hooks."""

    kind = "run"  # 'run' or 'qrels' (stored_identities, IngestResult)
    what = "run"  # how a group is called in messages ('run', 'qrels set')
    staging = "runs"  # the staging tables' name
    columns = ""  # the staging table's parsed columns
    stats_extra = ""  # more aggregates of file_stats
    empty_what = "lines"  # what an empty file lacks
    store: StoreHandle  # where the call stores (absent when it only parses: :meth:`parse`)

    def __init__(
        self,
        store: StoreHandle | None,
        format: str,
        replace: bool,
        progress: bool | None,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        if store is not None:
            self.store = store
        self.con: duckdb.DuckDBPyConnection = store.con if store is not None else con  # type: ignore[assignment]
        self.format = format
        self.replace = replace
        self.progress = progress
        self.files: list[SourceFile] = []
        self.results: dict[int, IngestResult] = {}

    # ------------------------------------------------------------------ hooks
    def plan(self) -> list[Group]:
        """The call's groups (and ``self.files``)."""
        raise NotImplementedError

    def known_name(self, g: Group) -> str | None:
        """The group's name when it is known before reading."""
        return g.name

    def same(self, stored: Stored, g: Group) -> bool:
        """The stored set under the group's name has the group's identity (nothing to do)."""
        return stored.same(g, self.format)

    def early_names(self, todo: list[Group]) -> list[Group]:
        """The groups whose names are checked before reading."""
        return [g for g in todo if self.known_name(g)]

    def read_fast(self, todo: list[Group], bar) -> list[Group]:
        """Read and store what the fast reader reads; return the groups left to the staging path."""
        return todo

    def after_group(self, st: Staging, stats: dict[int, tuple], g: Group) -> None:
        """After the group's files were checked for a bad line (a run's tag and name)."""

    def after_read(self, st: Staging, stats: dict[int, tuple], todo: list[Group]) -> None:
        """After every file was checked (a run of res files that are all empty)."""

    def duplicates(self, st: Staging, todo: list[Group]) -> dict[int, int]:
        """Per group, the surplus lines of repeated keys (raise when they are an error)."""
        raise NotImplementedError

    def store_staged(
        self, st: Staging, todo: list[Group], stats: dict[int, tuple], dups: dict[int, int]
    ) -> dict[int, IngestResult]:
        """Store the staged groups (inside the call's transaction)."""
        raise NotImplementedError

    def allow_empty(self) -> bool:
        return False

    def after_hash(self, g: Group) -> None:
        """After the group's files were hashed (qrels: the intent probabilities join the content)."""

    def hash(self, groups: Sequence[Group]) -> None:
        hash_groups(groups)
        for g in groups:
            self.after_hash(g)

    # ------------------------------------------------------------------ the skeleton
    def run(self) -> list[IngestResult]:
        groups = self.plan()
        stored = stored_identities(self.con, self.kind, [nm for g in groups if (nm := self.known_name(g))])
        self.hash([g for g in groups if self.known_name(g) in stored])
        todo, unchanged = [], []
        for g in groups:
            nm = self.known_name(g)
            if nm is not None and nm in stored and self.same(stored[nm], g):
                g.name = nm
                unchanged.append(g)
                self.results[g.idx] = IngestResult(self.kind, nm, "unchanged", g.sources)
            else:
                todo.append(g)
        if not todo:
            return [self.results[g.idx] for g in groups]
        check_names(unchanged + self.early_names(todo), self.what, named=self.known_name)
        n_files = sum(len(g.files) for g in todo)
        reading = f"reading {self.staging}"
        with progress_bar(n_files, reading, enabled=self.progress, min_total=1, transient=True) as bar:
            with self.store.transaction():
                rest = self.read_fast(todo, bar)
                if rest:
                    self.hash([g for g in rest if not g.sha])
                    self.staged(rest, unchanged + todo, bar)
                else:
                    check_names(unchanged + todo, self.what)
        return [self.results[g.idx] for g in groups]

    def staged(self, todo: list[Group], every: list[Group], bar) -> None:
        """The staging path: read and check (:meth:`checked`), store."""
        with Staging(self.con, self.staging, self.columns) as st:
            stats, dups = self.checked(st, todo, every, bar)
            bar.update(description=f"storing {self.staging}")
            self.results.update(self.store_staged(st, todo, stats, dups))

    def checked(
        self, st: Staging, todo: list[Group], every: list[Group], bar
    ) -> tuple[dict[int, tuple], dict[int, int]]:
        """Read ``todo``'s files into ``st`` with the general reader, check every file (its first bad
        line), name the groups, check every name (``every``) and the duplicates: the files' stats and
        the surplus lines of repeated keys per group. Needs no store."""
        todo_files = [f for g in todo for f in g.files]
        for f in todo_files:
            f.delim = None
        readers.load(st, todo_files, bar)
        stats = file_stats(st, self.stats_extra)
        for g in todo:
            for f in g.files:
                check_file(f, stats.get(f.idx), allow_empty=self.allow_empty(), empty_what=self.empty_what)
            self.after_group(st, stats, g)
        self.after_read(st, stats, todo)
        check_names(every, self.what)  # an unchanged group's name is taken too
        bar.update(description=f"checking {self.staging}")
        return stats, self.duplicates(st, todo)

    @contextmanager
    def parse(self) -> Iterator[tuple[Staging, list[Group]]]:
        """The call's files read and checked without a store (on ``self.con``): every file by the
        general reader, with the messages of an ingest; the checked rows stay in the staging tables
        (``st.rows``) while the block runs."""
        groups = self.plan()
        self.hash(groups)  # as an ingest does first: a damaged gzip file gets the same message
        with Staging(self.con, self.staging, self.columns) as st:
            self.checked(st, groups, groups, NO_BAR)
            yield st, groups


def hash_groups(groups: Sequence[Group]) -> None:
    """Take the content and file hashes of the groups' files (each file read once more)."""
    paths = [f.path for g in groups for f in g.files]
    if not paths:
        return
    shas, file_shas = hashes(paths)
    for g in groups:
        ps = [f.path for f in g.files]
        g.sha, g.file_sha = combined_sha(ps, shas), combined_sha(ps, file_shas)


def empty_call_error(files: list[SourceFile]) -> IngestError:
    return IngestError(
        "every res file is empty: the run has no documents",
        file=", ".join(f.name for f in files),
        expected=files[0].line_kind.expected,
    )

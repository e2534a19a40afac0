"""What one ingest call works on: its input files, the groups they form (a run or a qrels set
each) and the temporary tables the rows are parsed into before they are stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from .files import display_name
from .formats import LINE_KINDS, LineKind


@dataclass
class SourceFile:
    """One input file of the call."""

    idx: int
    path: Path
    compression: str
    line_kind_name: str
    grp: int = 0
    topic: str | None = None  # per-topic files (res / rel): the topic taken from the file name
    delim: str | None = None  # TREC runs whose first line is cleanly tab or space separated
    tag0: str | None = None  # the run tag of the first line (fast reader: every line's tag)

    @property
    def line_kind(self) -> LineKind:
        return LINE_KINDS[self.line_kind_name]

    @property
    def name(self) -> str:
        """The file as the user named it (``<stdin>`` for standard input)."""
        return display_name(self.path)


@dataclass
class Group:
    """The files that become one run or one qrels set."""

    idx: int
    files: list[SourceFile]
    sha: str  # of the content (decompressed; the set's identity with its options)
    name: str | None = None  # final name (known before parsing when given or from the file name)
    guess: str | None = None  # name expected before parsing (first line's tag)
    tag: str | None = None
    file_sha: str | None = None  # of the files as given (provenance)

    @property
    def final(self) -> str:
        """The name, once decided (given, from the file name, or from the run tag)."""
        assert self.name is not None, "internal: the group is stored before it was named"
        return self.name

    @property
    def sources(self) -> list[str]:
        return [f.name for f in self.files]


@dataclass
class Staging:
    """The temporary tables of one ingest call, dropped when the call ends (``with Staging(...)``).

    * ``raw``: the parsed rows (file_idx, grp, ln, err, then ``columns``), in reading order;
    * ``rows``: a view over ``raw`` with ``rid``, the raw row's rowid;
    * ``ids``: group -> the id the group is stored under (filled when writing).
    """

    con: duckdb.DuckDBPyConnection
    kind: str  # 'runs' or 'qrels'
    columns: str  # "name TYPE, ..." of the parsed values
    rows: str = field(init=False)
    raw: str = field(init=False)
    ids: str = field(init=False)

    def __post_init__(self) -> None:
        self.rows = f"_ingest_{self.kind}"
        self.raw = f"{self.rows}_raw"
        self.ids = f"{self.rows}_ids"

    @property
    def column_names(self) -> str:
        return ", ".join(c.split()[0] for c in self.columns.split(", "))

    def create(self) -> Staging:
        self.drop()
        self.con.execute(
            f"CREATE TEMP TABLE {self.raw} (file_idx INTEGER, grp INTEGER, ln BIGINT, err UTINYINT, {self.columns})"
        )
        return self

    def define_view(self) -> None:
        self.con.execute(
            f"CREATE OR REPLACE TEMP VIEW {self.rows} AS SELECT file_idx, grp, ln, err, "
            f"{self.column_names}, rowid AS rid FROM {self.raw}"
        )

    def drop(self) -> None:
        for stmt in (
            f"DROP VIEW IF EXISTS {self.rows}",
            f"DROP TABLE IF EXISTS {self.raw}",
            f"DROP TABLE IF EXISTS {self.ids}",
        ):
            try:
                self.con.execute(stmt)
            except duckdb.Error:  # a caller's transaction that an error aborted
                pass

    def __enter__(self) -> Staging:
        return self.create()

    def __exit__(self, *exc: object) -> None:
        self.drop()

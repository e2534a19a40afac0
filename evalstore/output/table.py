"""What every writer consumes: a :class:`Table` of rows under named columns, and an :class:`Output`
(the tables a command prints, the data behind them, the legend that explains them and notes for
the person at the terminal)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class Scores(Protocol):
    """What a writer reads of an evaluation (an :class:`evalstore.results.eval_result.EvalResult`; the reports
    sit below the results and do not import them): per-topic rows ``(run, topic, metric, value)``,
    summary rows ``(run, metric, summary, n_topics)`` and each metric's aggregate."""

    per_topic: list[tuple[str, str, str, float]]
    means: list[tuple[str, str, float, int]]
    aggregates: dict[str, str]


@dataclass
class Table:
    """Rows of values under named columns.

    ``title`` is shown above a table for readers (not written to csv/tsv/json); ``notes`` are lines
    for the reader (hints, what was left out), printed on stderr by the CLI so that stdout stays
    data; ``digits`` is the number of decimals of floats in a table for readers (None: as
    computed); ``rule_after``: rows after which a rule is drawn (LaTeX's ``\\midrule``: the
    baseline of a comparison); ``legend``: lines that explain the table (what its letters and
    columns mean, thresholds): they go with the table, under it in stdout or the file
    (``Output.legend``); ``groups``: a header row above the column names, ``(label, number of
    columns)`` pairs covering every column, and ``subheads`` the column names under it, for the
    writers that draw spanning heads (LaTeX: ``\\multicolumn`` and ``\\cmidrule``; the others use
    ``columns``, which then say everything on their own)."""

    columns: list[str]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    digits: int | None = 4
    rule_after: tuple[int, ...] = ()
    legend: list[str] = field(default_factory=list)
    groups: tuple[tuple[str, int], ...] = ()
    subheads: tuple[str, ...] = ()

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def transposed(self) -> Table:
        """Rows become columns: the first column's values head the new columns, every other column
        becomes a row (a leaderboard as one metric per row)."""
        heads = [str(r[0]) for r in self.rows]
        rows = [[c, *[r[i] for r in self.rows]] for i, c in enumerate(self.columns) if i > 0]
        return Table(
            [self.columns[0], *heads], rows, self.title, list(self.notes), self.digits, legend=list(self.legend)
        )


@dataclass(frozen=True)
class Marked:
    """A value with the marks a paper table gives it: ``bold`` (the best of its column), ``mark``
    (``▲``/``▼``: significantly better/worse than the baseline) and ``letters`` (the runs it is
    significantly better than). Each writer draws the marks in its own syntax; data formats
    write the value alone."""

    value: float
    bold: bool = False
    mark: str = ""
    letters: str = ""

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class Estimate:
    """A signed estimate, with its confidence interval when ``lo`` and ``hi`` are given: ``+0.0123
    [-0.0012, +0.0246]`` (a difference to a baseline and its interval, an effect size). ``digits``:
    decimals (None: the table's). Each writer draws it in its own syntax (LaTeX: the numbers in
    math mode, true minus signs); data formats write the value alone."""

    value: float
    lo: float | None = None
    hi: float | None = None
    digits: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass
class Output:
    """What a command prints.

    ``tables``: for readers (terminal, Markdown, LaTeX, a text file), in order; ``data``: the table
    for programs (csv, tsv, json, parquet; default the first table, values as computed);
    ``legend``: lines that explain the tables (written under them in a document, on stderr under a
    terminal table or beside data); ``notes``: for the person at the terminal (what was stored,
    left out), always on stderr; ``caption``: a LaTeX caption (the table then becomes a floating
    ``table``); ``result``: the evaluation behind the tables, for writers that need it (trec);
    ``document``: a nested JSON document that stands for the report in JSON (a shape another tool
    defines, such as repro_eval's), instead of the data table's records."""

    tables: list[Table]
    data: Table | None = None
    legend: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    caption: str | None = None
    result: Scores | None = None
    document: Any = None

    @classmethod
    def of(cls, table: Table | Output) -> Output:
        """A report of one table (its notes as the report's notes, its legend as the report's)."""
        if isinstance(table, Output):
            return table
        return cls([table], legend=list(table.legend), notes=list(table.notes))

    @property
    def data_table(self) -> Table:
        """The table for programs: ``data``, else the first table with values as computed."""
        if self.data is not None:
            return self.data
        t = self.tables[0]
        return Table(t.columns, t.rows, None, list(t.notes), None)

"""The unit every writer consumes: a table of rows with named columns, a title and notes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Table:
    """Rows of values under named columns.

    ``title`` is shown above a terminal table (not written to csv/tsv/json); ``notes`` are lines
    for the reader (legends, hints), printed on stderr by the CLI so that stdout stays data;
    ``digits`` is the number of decimals of floats in a terminal table (None: as computed)."""

    columns: list[str]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    digits: int | None = 4

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def transposed(self) -> Table:
        """Rows become columns: the first column's values head the new columns, every other column
        becomes a row (a leaderboard as one metric per row)."""
        heads = [str(r[0]) for r in self.rows]
        rows = [[c, *[r[i] for r in self.rows]] for i, c in enumerate(self.columns) if i > 0]
        return Table([self.columns[0], *heads], rows, self.title, list(self.notes), self.digits)

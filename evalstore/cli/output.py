"""Printing query results: rich tables on a terminal, plain text, CSV or JSON for pipes."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

FORMATS = ("table", "csv", "json", "tsv")


def _cell(v: Any, digits: int | None) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if digits is not None:
            return f"{v:.{digits}f}"
        return repr(v)
    return str(v)


def render(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str = "table",
    *,
    title: str | None = None,
    digits: int | None = 4,
    out=None,
) -> None:
    """Write rows to ``out`` (stdout) in the given format."""
    out = out or sys.stdout
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "csv" or fmt == "tsv":
        w = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
        return
    if fmt == "json":
        recs = [dict(zip(columns, [_jsonable(v) for v in r])) for r in rows]
        out.write(json.dumps(recs, indent=1, default=str) + "\n")
        return
    if out is sys.stdout and sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title, show_lines=False)
        for c in columns:
            t.add_column(str(c), justify="right" if _numeric(rows, columns.index(c)) else "left")
        for r in rows:
            t.add_row(*[_cell(v, digits) for v in r])
        Console().print(t)
        return
    # plain aligned text (pipes, logs)
    text = [[_cell(v, digits) for v in r] for r in rows]
    widths = [max([len(str(c))] + [len(r[i]) for r in text]) for i, c in enumerate(columns)]
    buf = io.StringIO()
    if title:
        buf.write(title + "\n")
    buf.write("  ".join(str(c).ljust(w) for c, w in zip(columns, widths)).rstrip() + "\n")
    for r in text:
        buf.write("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() + "\n")
    out.write(buf.getvalue())


def _numeric(rows, i) -> bool:
    return bool(rows) and all(isinstance(r[i], (int, float)) or r[i] is None for r in rows)


def _jsonable(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)

"""Writers: one per output format, one rule per format.

=========  ==========================================================================================
format     rule
=========  ==========================================================================================
``table``  a rich table on a terminal, plain aligned text otherwise (pipes, logs); floats with the
           table's ``digits`` decimals, NaN as ``nan``, NULL as an empty cell
``csv``    RFC 4180 CSV with a header; floats in full precision (``repr``), NULL as an empty field,
           timestamps as SQL prints them (``2026-11-22 10:00:00``)
``tsv``    the same with tabs
``json``   a list of objects, one per row: numbers as numbers (NaN and infinities as null,
           decimals as numbers), lists and structs as arrays and objects, timestamps in ISO 8601,
           bytes in hex
``markdown`` a pipe table (GitHub flavour): floats with the table's ``digits`` decimals (all digits
           when None), ``|`` escaped, NULL as an empty cell
``latex``  a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``): values as in markdown, LaTeX's
           special characters escaped
``parquet`` (files only) an Arrow table written by pyarrow: column types as inferred from the
           values, NULL as null
=========  ==========================================================================================

A file's format is ``--format`` or, without it, its extension (:data:`EXTENSIONS`);
:func:`file_format` refuses a mismatch.

Two writers are not tables: :func:`write_trec_eval` (trec_eval ``-q`` text of an evaluation) and
:func:`write_qrels` (TREC qrels lines).
"""

from __future__ import annotations

import csv
import datetime as _dt
import decimal
import io
import json
import math
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterable, Sequence
from typing import IO, Any

from ..result import EvalResult
from .table import Table

FORMATS = ("table", "csv", "tsv", "json", "markdown", "latex")
#: Formats a file can be written in (parquet is binary: files only).
FILE_FORMATS = (*FORMATS, "parquet")
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".md": "markdown",
    ".tex": "latex",
    ".parquet": "parquet",
    ".txt": "table",
}


class FormatMismatch(ValueError):
    """--format and the output file's extension disagree, or the extension is unknown."""


def file_format(fmt: str | None, path: str) -> str:
    """The format of an output file: ``fmt`` when given (it must agree with a known extension),
    else the one of the file's extension; ``csv`` for an unknown extension without ``fmt``."""
    ext = os.path.splitext(path)[1].lower()
    by_ext = EXTENSIONS.get(ext)
    if fmt is None or fmt == "table":
        return by_ext or "csv"
    if fmt not in FILE_FORMATS:
        raise FormatMismatch(f"unknown format {fmt!r}; use one of {', '.join(FILE_FORMATS)}")
    if by_ext is not None and by_ext != fmt:
        raise FormatMismatch(
            f"--format {fmt} does not match the extension {ext} of {path} ({by_ext}); "
            f"drop one of them or make them agree"
        )
    return fmt


def write_file(table: Table, fmt: str, path: str) -> None:
    """Write ``table`` to the file ``path`` in ``fmt`` (one of :data:`FILE_FORMATS`)."""
    if fmt == "parquet":
        import pyarrow as pa  # only when a Parquet file is written
        import pyarrow.parquet as pq

        cols = {str(c): [json_value(r[i]) if not isinstance(r[i], float) else r[i] for r in table.rows]
                for i, c in enumerate(table.columns)}  # fmt: skip
        pq.write_table(pa.table(cols), path)
        return
    with open(path, "w", newline="", encoding="utf-8") as fh:
        write(table, fmt, fh)


def write(table: Table, fmt: str = "table", out: IO[str] | None = None) -> None:
    """Write ``table`` to ``out`` (stdout) in format ``fmt`` (one of :data:`FORMATS`)."""
    out = out or sys.stdout
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt in ("csv", "tsv"):
        w = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(table.columns)
        for r in table.rows:
            w.writerow([csv_value(v) for v in r])
    elif fmt == "json":
        out.write(
            json.dumps(
                [{c: json_value(v) for c, v in zip(table.columns, r)} for r in table.rows], indent=1, ensure_ascii=False
            )
            + "\n"
        )
    elif fmt == "markdown":
        out.write(markdown_text(table))
    elif fmt == "latex":
        out.write(latex_text(table))
    elif out is sys.stdout and sys.stdout.isatty():
        width = shutil.get_terminal_size().columns
        if _width(table) > width and len(table.rows) < len(table.columns) and _width(table.transposed()) <= width:
            table = table.transposed()  # a wide leaderboard: one metric per row instead of a row of '…'
        _rich(table)
    else:
        out.write(plain_text(table))


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN``: a run tag or topic holding a terminal
    escape sequence cannot recolour, move or clear the screen of whoever reads the output."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text) if _CONTROL.search(text) else text


def csv_value(v: Any) -> Any:
    """A value as written to CSV/TSV (control characters in text shown as \\xNN)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return printable(v)
    return v


def json_value(v: Any) -> Any:
    """A JSON-native value: lists and structs kept as arrays/objects, decimals as numbers."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (uuid.UUID, _dt.timedelta)):
        return str(v)
    return str(v)


def cell(v: Any, digits: int | None) -> str:
    """A value as shown in a terminal table (control characters shown as \\xNN)."""
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.{digits}f}" if digits is not None else repr(v)
    return printable(str(v))


def plain_text(table: Table) -> str:
    """The table as aligned plain text (title line, header, rows)."""
    text = [[cell(v, table.digits) for v in r] for r in table.rows]
    widths = [max([len(str(c))] + [len(r[i]) for r in text]) for i, c in enumerate(table.columns)]
    buf = io.StringIO()
    if table.title:
        buf.write(printable(table.title) + "\n")
    buf.write("  ".join(printable(str(c)).ljust(w) for c, w in zip(table.columns, widths)).rstrip() + "\n")
    for r in text:
        buf.write("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() + "\n")
    return buf.getvalue()


def markdown_text(table: Table) -> str:
    """The table as a GitHub-flavoured Markdown pipe table (numbers right-aligned)."""

    def esc(v: str) -> str:
        return v.replace("|", "\\|").replace("\n", " ")

    cols = [esc(str(c)) for c in table.columns]
    align = ["---:" if _numeric(table.rows, i) else "---" for i in range(len(cols))]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(align) + "|"]
    for r in table.rows:
        lines.append("| " + " | ".join(esc(cell(v, table.digits)) for v in r) + " |")
    return "\n".join(lines) + "\n"


_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_TEX.get(c, c) for c in text)


def latex_text(table: Table) -> str:
    """The table as a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``)."""
    spec = "".join("r" if _numeric(table.rows, i) else "l" for i in range(len(table.columns)))
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    lines.append(" & ".join(tex_escape(str(c)) for c in table.columns) + " \\\\")
    lines.append("\\midrule")
    for r in table.rows:
        lines.append(" & ".join(tex_escape(cell(v, table.digits)) for v in r) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _width(table: Table) -> int:
    """The width of the table drawn as a terminal table (3 characters of padding and rule per column)."""
    text = [[cell(v, table.digits) for v in r] for r in table.rows]
    return sum(max([len(str(c))] + [len(r[i]) for r in text]) + 3 for i, c in enumerate(table.columns)) + 1


def _numeric(rows: Sequence[Sequence[Any]], i: int) -> bool:
    return bool(rows) and all(isinstance(r[i], (int, float)) or r[i] is None for r in rows)


def _rich(table: Table) -> None:
    from rich.console import Console  # rich is imported only when a terminal table is drawn
    from rich.table import Table as RichTable
    from rich.text import Text

    # Text(): names are shown as they are, never read as rich markup ('[red]')
    t = RichTable(title=Text(printable(table.title)) if table.title else None, show_lines=False)
    for i, c in enumerate(table.columns):
        t.add_column(Text(printable(str(c))), justify="right" if _numeric(table.rows, i) else "left")
    for r in table.rows:
        t.add_row(*[Text(cell(v, table.digits)) for v in r])
    Console().print(t)


# --------------------------------------------------------------------------- not tables
def trec_eval_text(result: EvalResult, *, per_topic: bool = True) -> str:
    """trec_eval ``-q`` layout: ``measure<TAB>topic<TAB>value`` with ``all`` for the summaries.

    Integer-valued sums (NumRet, ...) print as integers, other values with 4 decimals. Metrics
    summarised by a geometric mean (GM_AP = gm_map, ...) print only the summary, as trec_eval.
    Several runs: each line starts with the run name."""
    buf = io.StringIO()
    runs = list(dict.fromkeys(r for r, _, _, _ in result.means))
    multi = len(runs) > 1
    for run in runs:
        prefix = f"{run}\t" if multi else ""
        if per_topic:
            for r, t, m, v in result.per_topic:
                if r == run and result.aggregates.get(m) != "gmean":
                    buf.write(f"{prefix}{m:<22s}\t{t}\t{_trec_value(v, result.aggregates.get(m))}\n")
        for r, m, v, _ in result.means:
            if r == run:
                buf.write(f"{prefix}{m:<22s}\tall\t{_trec_value(v, result.aggregates.get(m))}\n")
    return buf.getvalue()


def _trec_value(v: float | None, aggregate: str | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    if aggregate == "sum" and float(v).is_integer():
        return str(int(v))
    return f"{v:.4f}"


def write_trec_eval(result: EvalResult, out: IO[str] | None = None, *, per_topic: bool = True) -> None:
    (out or sys.stdout).write(trec_eval_text(result, per_topic=per_topic))


def qrels_text(rows: Iterable[tuple[str, str, int]]) -> str:
    """TREC qrels lines ``topic 0 docno grade`` for rows ``(topic, doc, grade)``."""
    return "".join(f"{t} 0 {d} {g}\n" for t, d, g in rows)

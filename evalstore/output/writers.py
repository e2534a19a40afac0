"""The writers: one function per output format, each with one rule (registered with its name,
extensions and kind in :mod:`.formats`).

Documents (for readers) write every table of a :class:`~.table.Output` with its title, floats
with the table's ``digits``, and the report's legend under the tables:

* ``table``: a rich table on a terminal, aligned plain text otherwise (pipes, logs, ``.txt``);
  NaN as ``nan``, NULL as an empty cell;
* ``markdown``: GitHub pipe tables (numbers right-aligned, ``|`` escaped), titles as bold lines;
* ``latex``: booktabs ``tabular``\\ s (``\\usepackage{booktabs}``), LaTeX's specials escaped; with
  a caption, a floating ``table``; the legend as ``%`` comment lines otherwise.

Data (for programs) write the report's data table with values as computed:

* ``csv`` (RFC 4180, header, floats in full precision via ``repr``, NULL empty, timestamps as SQL
  prints them) and ``tsv`` (the same with tabs);
* ``json``: a list of objects (numbers as numbers, NaN and infinities as null, lists and structs as
  arrays and objects, timestamps in ISO 8601, bytes in hex);
* ``parquet`` (files only): an Arrow table written by pyarrow.

Every name passes through :func:`~.text.printable` (control characters as ``\\xNN``), except in
JSON and Parquet, which keep text exactly (JSON escapes control characters itself).

One writer is not a table's: :func:`trec_eval_text` (trec_eval ``-q`` text of an evaluation). TREC
qrels lines are written by :func:`evalstore.subsample.qrels_text`.
"""

from __future__ import annotations

import csv
import datetime as _dt
import decimal
import io
import json
import math
import shutil
import sys
import uuid
from collections.abc import Sequence
from typing import IO, Any

from .table import Estimate, Marked, Output, Scores, Table
from .text import cell, markdown_escape, number, printable, tex_escape


# --------------------------------------------------------------------------- data
def plain_value(v: Any) -> Any:
    """A value without marks (a :class:`Marked` mean or an :class:`Estimate` is its number)."""
    return v.value if isinstance(v, (Marked, Estimate)) else v


def csv_value(v: Any) -> Any:
    """A value as written to CSV/TSV (control characters in text shown as \\xNN)."""
    v = plain_value(v)
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return printable(v)
    return v


def json_value(v: Any) -> Any:
    """A JSON-native value: lists and structs kept as arrays/objects, decimals as numbers."""
    v = plain_value(v)
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


def write_csv(report: Output, out: IO[str], delimiter: str = ",") -> None:
    table = report.data_table
    w = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    w.writerow([printable(c) for c in table.columns])
    for r in table.rows:
        w.writerow([csv_value(v) for v in r])


def write_tsv(report: Output, out: IO[str]) -> None:
    write_csv(report, out, "\t")


#: the first characters that make a spreadsheet read a cell as a formula (OWASP's "CSV injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(v: Any) -> Any:
    """A CSV value for a spreadsheet: a text that a spreadsheet would run as a formula (starting
    with =, +, -, @, a tab or CR) behind a ``'``, which shows it as text; numbers as they are."""
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v


def write_spreadsheet_csv(report: Output, out: IO[str]) -> None:
    """CSV to open in a spreadsheet (Excel, LibreOffice): as ``csv``, with every text a
    spreadsheet would run as a formula shown as text (:func:`spreadsheet_text`)."""
    table = report.data_table
    w = csv.writer(out, lineterminator="\n")
    w.writerow([spreadsheet_text(printable(c)) for c in table.columns])
    for r in table.rows:
        w.writerow([spreadsheet_text(csv_value(v)) for v in r])


def write_json(report: Output, out: IO[str]) -> None:
    if report.document is not None:
        out.write(json.dumps(json_value(report.document), indent=1, ensure_ascii=False) + "\n")
        return
    table = report.data_table
    records = [{str(c): json_value(v) for c, v in zip(table.columns, r)} for r in table.rows]
    out.write(json.dumps(records, indent=1, ensure_ascii=False) + "\n")


def write_parquet(report: Output, out: IO[bytes]) -> None:
    import pyarrow as pa  # only when a Parquet file is written
    import pyarrow.parquet as pq

    table = report.data_table
    cols = {
        str(c): [
            json_value(r[i]) if not isinstance(plain_value(r[i]), float) else plain_value(r[i]) for r in table.rows
        ]
        for i, c in enumerate(table.columns)
    }
    pq.write_table(pa.table(cols), out)


# --------------------------------------------------------------------------- documents
def _marked_text(v: Marked, digits: int | None) -> str:
    return number(v.value, digits) + (f" {v.mark}" if v.mark else "") + (f"^{v.letters}" if v.letters else "")


def _signed(v: float, digits: int | None) -> str:
    """A number with its sign (+0.0123, -0.0012; 0 without one): a difference reads as one."""
    s = number(v, digits)
    return s if s.startswith("-") or s == "nan" or float(s) == 0 else "+" + s


def estimate_text(v: Estimate, digits: int | None) -> str:
    """``+0.0123 [-0.0012, +0.0246]``: the estimate and its interval, signed."""
    d = v.digits if v.digits is not None else digits
    parts = [_signed(v.value, d)]
    if v.lo is not None and v.hi is not None:
        parts.append(f"[{_signed(v.lo, d)}, {_signed(v.hi, d)}]")
    return " ".join(parts)


def text_cell(v: Any, digits: int | None) -> str:
    if isinstance(v, Estimate):
        return estimate_text(v, digits)
    return _marked_text(v, digits) if isinstance(v, Marked) else cell(v, digits)


def plain_text(table: Table) -> str:
    """The table as aligned plain text (title line, header, rows)."""
    text = [[text_cell(v, table.digits) for v in r] for r in table.rows]
    heads = [printable(c) for c in table.columns]
    widths = [max([len(h)] + [len(r[i]) for r in text]) for i, h in enumerate(heads)]
    buf = io.StringIO()
    if table.title:
        buf.write(printable(table.title) + "\n")
    buf.write("  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip() + "\n")
    for r in text:
        buf.write("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() + "\n")
    return buf.getvalue()


def write_table(report: Output, out: IO[str]) -> None:
    """Rich tables on a terminal (``out`` is a terminal), aligned plain text otherwise; the legend
    under them."""
    terminal = out is sys.stdout and sys.stdout.isatty()
    for i, table in enumerate(report.tables):
        if i:
            out.write("\n")
        if terminal:
            _rich(_fitted(table))
        else:
            out.write(plain_text(table))
    if report.legend:
        out.write("\n" + "\n".join(printable(line) for line in report.legend) + "\n")


def _marked_markdown(v: Marked, digits: int | None) -> str:
    s = number(v.value, digits)
    s = f"**{s}**" if v.bold else s
    return s + (f" {v.mark}" if v.mark else "") + (f"<sup>{markdown_escape(v.letters)}</sup>" if v.letters else "")


def markdown_text(table: Table) -> str:
    """The table as a GitHub-flavoured Markdown pipe table (numbers right-aligned)."""

    def md(v: Any) -> str:
        if isinstance(v, Estimate):
            return estimate_text(v, table.digits)
        return _marked_markdown(v, table.digits) if isinstance(v, Marked) else markdown_escape(cell(v, table.digits))

    cols = [markdown_escape(c) for c in table.columns]
    align = ["---:" if _numeric(table.rows, i) else "---" for i in range(len(cols))]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(align) + "|"]
    for r in table.rows:
        lines.append("| " + " | ".join(md(v) for v in r) + " |")
    return "\n".join(lines) + "\n"


def write_markdown(report: Output, out: IO[str]) -> None:
    parts = []
    for table in report.tables:
        head = f"**{markdown_escape(table.title)}**\n\n" if table.title and len(report.tables) > 1 else ""
        parts.append(head + markdown_text(table))
    if report.legend:
        parts.append("\n\n".join(markdown_escape(line) for line in report.legend) + "\n")
    out.write("\n".join(parts))


def _marked_latex(v: Marked, digits: int | None) -> str:
    s = number(v.value, digits)
    s = f"\\textbf{{{s}}}" if v.bold else s
    if v.mark:
        s += "$^{\\uparrow}$" if v.mark == "▲" else "$^{\\downarrow}$"
    if v.letters:
        s += f"$^{{{tex_escape(v.letters)}}}$"
    return s


def latex_text(table: Table) -> str:
    """The table as a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``)."""

    def tex(v: Any) -> str:
        if isinstance(v, Estimate):  # numbers in math mode (true minus signs), the interval smaller
            return (
                "$"
                + estimate_text(v, table.digits).replace(" [", "$ {\\footnotesize $[")
                + ("$}" if v.lo is not None and v.hi is not None else "$")
            )
        return _marked_latex(v, table.digits) if isinstance(v, Marked) else tex_escape(cell(v, table.digits))

    spec = "".join("r" if _numeric(table.rows, i) else "l" for i in range(len(table.columns)))
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    heads = list(table.columns)
    if table.groups:
        lines += _latex_groups(table.groups)
        heads = list(table.subheads) or heads
    lines.append(" & ".join(tex_escape(c) for c in heads) + " \\\\")
    lines.append("\\midrule")
    for i, r in enumerate(table.rows):
        lines.append(" & ".join(tex(v) for v in r) + " \\\\")
        if i in table.rule_after and i + 1 < len(table.rows):
            lines.append("\\midrule")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _latex_groups(groups: Sequence[tuple[str, int]]) -> list[str]:
    """The spanning head row (``\\multicolumn``) and the rules under the groups with a label."""
    cells, rules, first = [], [], 1
    for label, span in groups:
        cells.append(
            f"\\multicolumn{{{span}}}{{c}}{{{tex_escape(label)}}}" if label and span > 1 else tex_escape(label)
        )
        if label:
            rules.append(f"\\cmidrule(lr){{{first}-{first + span - 1}}}")
        first += span
    return [" & ".join(cells) + " \\\\", " ".join(rules)] if rules else [" & ".join(cells) + " \\\\"]


def write_latex(report: Output, out: IO[str]) -> None:
    """Each table as a ``tabular``; with a caption, the first inside a floating ``table`` with it."""
    parts = []
    for i, table in enumerate(report.tables):
        body = latex_text(table)
        if i == 0 and report.caption:
            body = (
                "% evalstore; needs \\usepackage{booktabs}\n\\begin{table}[t]\n\\centering\n"
                f"\\caption{{{tex_escape(report.caption)}}}\n{body}\\end{{table}}\n"
            )
        elif table.title and len(report.tables) > 1:
            body = f"% {printable(table.title)}\n{body}"
        parts.append(body)
    if report.legend and not report.caption:
        parts.append("".join(f"% {printable(line)}\n" for line in report.legend))
    out.write("\n".join(parts))


def _fitted(table: Table) -> Table:
    """A wide leaderboard on a narrow terminal: one metric per row instead of a row of '…'."""
    width = shutil.get_terminal_size().columns
    if _width(table) > width and len(table.rows) < len(table.columns) and _width(table.transposed()) <= width:
        return table.transposed()
    return table


def _width(table: Table) -> int:
    """The width of the table drawn as a terminal table (3 characters of padding and rule per column)."""
    text = [[text_cell(v, table.digits) for v in r] for r in table.rows]
    return sum(max([len(str(c))] + [len(r[i]) for r in text]) + 3 for i, c in enumerate(table.columns)) + 1


def _numeric(rows: Sequence[Sequence[Any]], i: int) -> bool:
    return bool(rows) and all(isinstance(r[i], (int, float, Marked, Estimate)) or r[i] is None for r in rows)


def _rich(table: Table) -> None:
    from rich.console import Console  # rich is imported only when a terminal table is drawn
    from rich.table import Table as RichTable
    from rich.text import Text

    # Text(): names are shown as they are, never read as rich markup ('[red]')
    t = RichTable(title=Text(printable(table.title)) if table.title else None, show_lines=False)
    for i, c in enumerate(table.columns):
        t.add_column(Text(printable(c)), justify="right" if _numeric(table.rows, i) else "left")
    for r in table.rows:
        t.add_row(*[Text(text_cell(v, table.digits)) for v in r])
    Console().print(t)


# --------------------------------------------------------------------------- not tables
def trec_eval_text(result: Scores, *, per_topic: bool = True) -> str:
    """trec_eval ``-q`` layout: ``measure<TAB>topic<TAB>value`` with ``all`` for the summaries.

    Integer-valued sums (NumRet, ...) print as integers, other values with 4 decimals. Metrics
    summarised by a geometric mean (GM_AP = gm_map, ...) print only the summary, as trec_eval.
    Several runs: each line starts with the run name. Names are printable (a tab in a name
    cannot add a column)."""
    buf = io.StringIO()
    runs = list(dict.fromkeys(r for r, _, _, _ in result.means))
    multi = len(runs) > 1
    for run in runs:
        prefix = f"{printable(run)}\t" if multi else ""
        if per_topic:
            for r, t, m, v in result.per_topic:
                if r == run and result.aggregates.get(m) != "gmean":
                    buf.write(
                        f"{prefix}{printable(m):<22s}\t{printable(t)}\t{_trec_value(v, result.aggregates.get(m))}\n"
                    )
        for r, m, v, _ in result.means:
            if r == run:
                buf.write(f"{prefix}{printable(m):<22s}\tall\t{_trec_value(v, result.aggregates.get(m))}\n")
    return buf.getvalue()


def write_trec(report: Output, out: IO[str]) -> None:
    """trec_eval's layout of the report's evaluation (per topic when the report's table is)."""
    if report.result is None:
        raise ValueError("the trec format writes an evaluation; this output is not one")
    per_topic = bool(report.tables) and "topic" in report.tables[0].columns
    out.write(trec_eval_text(report.result, per_topic=per_topic))


def _trec_value(v: float | None, aggregate: str | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    if aggregate == "sum" and float(v).is_integer():
        return str(int(v))
    return f"{v:.4f}"

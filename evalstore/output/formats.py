"""The output formats: one registry entry each (name, file extensions, kind, writer, help).

Commands read their ``--format`` choices, help text and the extension rule from here
(:data:`OUTPUT_FORMATS`); a new format is one :class:`OutputFormat` entry and its writer in
:mod:`.writers`.

Kinds: a **document** is for readers (every table of a report with its title and decimals, the
legend under it); **data** is for programs (the report's data table, values as computed); an
**evaluation** format writes an evaluation itself (trec_eval's layout), so only the commands that
print one offer it.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from . import writers
from .table import Output, Table

#: The file formats of a figure (``--plot``, :mod:`.plots`), by extension.
FIGURE_EXTENSIONS = (".png", ".svg")


@dataclass(frozen=True)
class OutputFormat:
    name: str
    extensions: tuple[str, ...]
    kind: str  # 'document', 'data' or 'evaluation'
    write: Callable[[Output, IO[Any]], None]
    help: str
    files_only: bool = False  # binary: written to a file, never to a terminal
    binary: bool = False
    #: extensions of other formats this one may be written to when --format names it (a CSV for
    #: spreadsheets is a .csv file)
    accepts: tuple[str, ...] = ()


OUTPUT_FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("table", (".txt",), "document", writers.write_table, "a table (rich on a terminal, plain text)"),
        OutputFormat("csv", (".csv",), "data", writers.write_csv, "CSV, values in full precision"),
        OutputFormat("tsv", (".tsv",), "data", writers.write_tsv, "tab-separated values"),
        OutputFormat(
            "spreadsheet-csv",
            (),
            "data",
            writers.write_spreadsheet_csv,
            "CSV to open in a spreadsheet: a name starting with = + - @ is written behind a ' so that no formula "
            "runs (csv and tsv keep every value exactly as it is)",
            accepts=(".csv",),
        ),
        OutputFormat("json", (".json",), "data", writers.write_json, "a JSON list of objects"),
        OutputFormat("markdown", (".md",), "document", writers.write_markdown, "GitHub Markdown tables"),
        OutputFormat("latex", (".tex",), "document", writers.write_latex, "booktabs LaTeX tables"),
        OutputFormat(
            "parquet",
            (".parquet",),
            "data",
            writers.write_parquet,
            "Parquet (files only)",
            files_only=True,
            binary=True,
        ),
        OutputFormat("trec", (), "evaluation", writers.write_trec, "trec_eval's -q layout: measure, topic, value"),
    )
}

#: The kinds most commands print: tables.
TABLES = ("document", "data")


class FormatMismatch(ValueError):
    """--format and the output file's extension disagree, or the extension is unknown."""


def names(kinds: tuple[str, ...] = TABLES, *, files: bool = True) -> list[str]:
    """The format names of ``kinds`` (``files=False``: only those that can go to stdout)."""
    return [f.name for f in OUTPUT_FORMATS.values() if f.kind in kinds and (files or not f.files_only)]


def by_extension(path: str) -> OutputFormat | None:
    ext = os.path.splitext(path)[1].lower()
    return next((f for f in OUTPUT_FORMATS.values() if ext in f.extensions), None)


def file_format(fmt: str | None, path: str, kinds: tuple[str, ...] = TABLES) -> str:
    """The format of an output file: ``fmt`` when given (it must agree with a known extension),
    else the one of the file's extension (an unknown extension without ``fmt`` is refused)."""
    known = by_extension(path)
    if fmt is None:
        if known is None or known.kind not in kinds:
            exts = ", ".join(e for f in OUTPUT_FORMATS.values() if f.kind in kinds for e in f.extensions)
            raise FormatMismatch(
                f"cannot tell the format of {path} from its extension; use one of {exts}, or give --format"
            )
        return known.name
    if fmt not in names(kinds):
        raise FormatMismatch(f"unknown format {fmt!r}; use one of {', '.join(names(kinds))}")
    ext = os.path.splitext(path)[1].lower()
    if known is not None and known.name != fmt and ext not in OUTPUT_FORMATS[fmt].accepts:
        raise FormatMismatch(
            f"--format {fmt} does not match the extension {ext} of {path} ({known.name}); "
            f"drop one of them or make them agree"
        )
    return fmt


def write(report: Output | Table, fmt: str = "table", out: IO[Any] | None = None) -> None:
    """Write a report (or a table) in ``fmt`` to ``out`` (stdout)."""
    OUTPUT_FORMATS[fmt].write(Output.of(report), out if out is not None else sys.stdout)


def to_bytes(report: Output | Table, fmt: str) -> bytes:
    """A report (or a table) written in ``fmt`` as bytes (text as UTF-8): a file to download."""
    spec = OUTPUT_FORMATS[fmt]
    buf: Any = io.BytesIO() if spec.binary else io.StringIO()
    spec.write(Output.of(report), buf)
    return buf.getvalue() if spec.binary else buf.getvalue().encode("utf-8")


def help_text(kinds: tuple[str, ...] = TABLES) -> str:
    """The help of a --format option: each format of ``kinds`` with what it is."""
    return "; ".join(f"{f.name}: {f.help}" for f in OUTPUT_FORMATS.values() if f.kind in kinds)

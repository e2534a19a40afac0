"""The CLI's one output path: a report to stdout or a file, its legend and notes to stderr.

:func:`emit` decides where each part of a :class:`~evalstore.output.table.Output` goes:

==================  ==========================  =====================  ===============
format              tables / data               legend                 notes
==================  ==========================  =====================  ===============
table, terminal     stdout (rich)               stderr                 stderr
table, file/pipe    the file / stdout (plain)   under the tables       stderr
markdown, latex     stdout or the file          under the tables       stderr
csv, tsv, json      the data table              stderr                 stderr
parquet             the file                    stderr                 stderr
trec                the evaluation              stderr                 stderr
==================  ==========================  =====================  ===============

(LaTeX puts the legend in its caption when the report has one, else in ``%`` comment lines.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import typer

from ..base.output_file import replacing
from ..output.formats import OUTPUT_FORMATS, TABLES, FormatMismatch, file_format, help_text, names
from ..output.table import Output, Table
from ..output.text import printable
from .choices import choice_parser


def format_option(kinds: tuple[str, ...] = TABLES, *, files: bool = True, extra_help: str = "") -> Any:
    """The ``--format/-f`` option of a command that prints ``kinds`` of formats: its choices and
    help come from the registry (:data:`~evalstore.output.formats.OUTPUT_FORMATS`); the parser
    refuses any other value before the command runs. Default: table, or the extension of -o."""
    choices = names(kinds, files=files)
    return typer.Option(
        None,
        "--format",
        "-f",
        parser=choice_parser(choices),
        metavar="[" + "|".join(choices) + "]",
        show_default=False,
        help=f"Output format (default: table, or from the extension of -o). {help_text(kinds)}.{extra_help}",
    )


OutputFile = typer.Option(None, "--output", "-o", help="Write to this file (format from --format or the extension).")


def output_format(fmt: str | None, output: str | None, kinds: tuple[str, ...] = TABLES) -> str:
    """The format a command writes: ``fmt`` (default table) for stdout; for a file ``fmt`` or the
    file's extension (a mismatch, an unknown extension or an unwritable folder is an error, raised
    before any work is done)."""
    if not output:
        chosen = fmt or "table"
        if chosen not in OUTPUT_FORMATS or OUTPUT_FORMATS[chosen].kind not in kinds:
            raise typer.BadParameter(f"{chosen!r} is not one of {', '.join(names(kinds))}", param_hint="--format")
        if OUTPUT_FORMATS[chosen].files_only:
            raise typer.BadParameter(f"{chosen} is written to a file: give -o FILE", param_hint="--format")
        return chosen
    check_writable(output, "--output")
    try:
        return file_format(fmt, output, kinds)
    except FormatMismatch as e:
        raise typer.BadParameter(str(e), param_hint="--format") from None


def emit(report: Output | Table, fmt: str = "table", output: str | None = None) -> None:
    """Write ``report`` in ``fmt`` to stdout or to the file ``output``; see the module docstring
    for where the legend and the notes go."""
    report = Output.of(report)
    spec = OUTPUT_FORMATS[fmt]
    terminal = output is None and fmt == "table" and sys.stdout.isatty()
    legend_inside = spec.kind == "document" and not terminal
    shown = report if legend_inside else replace(report, legend=[])
    if output:
        with replacing(output, binary=spec.binary) as fh:  # whole or not at all
            spec.write(shown, fh)
    else:
        spec.write(shown, sys.stdout)
        sys.stdout.flush()  # before notes on stderr, so that a shared log keeps the order
    stderr = ([] if legend_inside else list(report.legend)) + _notes(report)
    if output:
        stderr.append(f"wrote {output}")
    for line in stderr:
        say(line)


def _notes(report: Output) -> list[str]:
    out = list(report.notes)
    for t in report.tables:
        out += [n for n in t.notes if n not in out]
    return out


class UsageProblem(typer.BadParameter):
    """A usage error (exit 2, the usage line above it) whose message says it all: what is missing
    and what to do, without Click's "Invalid value for OPTION:" in front of an option that was not
    given at all."""

    def format_message(self) -> str:
        return self.message


def check_can_ask(yes: bool, what: str = "go ahead") -> None:
    """Before any work: a command that would ask for confirmation refuses to run unattended without
    ``--yes`` (nothing can be asked on a pipe); ``what`` the command does, as the message says it."""
    if not yes and not sys.stdin.isatty():
        raise UsageProblem(
            f"this asks for confirmation, and standard input is not a terminal (a pipe or a script): "
            f"add --yes (-y) to {what} without being asked"
        )


def confirmed(yes: bool, question: str) -> bool:
    """True with ``--yes``, else the answer to ``question`` (asked on stderr); a no is said."""
    if yes or typer.confirm(question, err=True):
        return True
    say("nothing done")
    return False


def say(message: str | Sequence[str]) -> None:
    """A message for the person at the terminal (stderr, so that stdout stays data): a line, or
    lines (evalstore's own line breaks); names in them are printable (control characters, a line
    break of a name too, as \\xNN)."""
    lines = [message] if isinstance(message, str) else list(message)
    typer.echo("\n".join(printable(line) for line in lines), err=True)


def check_writable(path: str | None, option: str, suffix: str | tuple[str, ...] | None = None) -> None:
    """Refuse an output path that cannot be written (missing or read-only folder, wrong suffix:
    one, or one of several) before any work is done."""
    if not path:
        return
    suffixes = (suffix,) if isinstance(suffix, str) else suffix
    if suffixes and not path.lower().endswith(suffixes):
        raise typer.BadParameter(f"{path}: the file name must end in {' or '.join(suffixes)}", param_hint=option)
    if os.path.isdir(path):
        raise typer.BadParameter(f"{path} is a folder; give the name of a file to write", param_hint=option)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise typer.BadParameter(f"{path}: the folder {folder} does not exist", param_hint=option)
    if not os.access(folder, os.W_OK):
        raise typer.BadParameter(f"{path}: the folder {folder} is not writable", param_hint=option)

"""Input files named on the command line: ``-`` is standard input, spooled once to a temporary
file (the readers and the content hash need a file they can read more than once)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import typer


@contextmanager
def spooled(paths: Sequence[str]) -> Iterator[list[str]]:
    """The paths with ``-`` replaced by a temporary copy of standard input (removed afterwards)."""
    if sum(p == "-" for p in paths) > 1:
        raise typer.BadParameter("standard input (-) can be read only once", param_hint="FILES")
    tmp = None
    out = list(paths)
    try:
        if "-" in out:
            if sys.stdin.isatty():
                raise typer.BadParameter("- reads standard input, but nothing is piped in", param_hint="FILES")
            fd, tmp = tempfile.mkstemp(prefix="evalstore-stdin-", suffix=".txt")
            with os.fdopen(fd, "wb") as f:
                shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
            out[out.index("-")] = tmp
        yield out
    finally:
        if tmp:
            os.unlink(tmp)


def text_or_stdin(value: str, param_hint: str) -> str:
    """``value``, or the text of standard input when it is ``-`` (``evalstore sql -``)."""
    if value != "-":
        return value
    if sys.stdin.isatty():
        raise typer.BadParameter("- reads standard input, but nothing is piped in", param_hint=param_hint)
    text = sys.stdin.read()
    if not text.strip():
        raise typer.BadParameter("standard input is empty", param_hint=param_hint)
    return text

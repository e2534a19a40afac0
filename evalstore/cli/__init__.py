"""The ``evalstore`` command line: a thin Typer layer over the library.

Each command parses its options, makes one library call and hands the result to one writer
(:mod:`.output`, over :mod:`evalstore.output`). The application and the entry point are in
:mod:`.app`, the options shared by commands in :mod:`.options`; the command groups live in their
own modules (``*_cmds``), which register their commands on the application when imported. A command
line imports only the module of the command it names (:mod:`.commands`); :func:`application` is the
application with every command.
"""

from __future__ import annotations

import typer

from .app import app as _app
from .app import main
from .commands import load_all


def application() -> typer.Typer:
    """The Typer application with every command registered (for ``typer.testing.CliRunner``, the
    generated reference), in the order ``--help`` lists them."""
    load_all(_app)
    return _app


__all__ = ["application", "main"]

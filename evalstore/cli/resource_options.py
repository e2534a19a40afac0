"""The resource options of a command (--db, --memory-limit, --threads, --temp-dir, --wait): their
parser, and what a command hands :func:`evalstore.cli.app.open_store` (the options' dataclass,
:class:`evalstore.cli.options.StoreOptions` or :class:`evalstore.cli.options.AnalysisOptions`).
A command's own options travel with its call. The same options given before the subcommand
(``evalstore --db X eval ...``), and ``--debug``, reach it through the environment variables
its options read (``$EVALSTORE_DB``, ...; :func:`evalstore.cli.app.root`), set for that one
invocation and put back when it ends."""

from __future__ import annotations

from typing import Protocol

import typer

from ..base.memory_limit import check_memory_limit
from ..errors import StoreError


class StoreResources(Protocol):
    """Where the store is and what DuckDB may use while a command runs."""

    @property
    def db(self) -> str | None: ...
    @property
    def memory_limit(self) -> str | None: ...
    @property
    def threads(self) -> int | None: ...
    @property
    def temp_dir(self) -> str | None: ...
    @property
    def wait(self) -> float | None: ...


def memory_limit(value: str) -> str:
    """The parser of --memory-limit: a size with a unit or a share of the RAM, checked before the
    command runs (a usage error otherwise)."""
    try:
        return check_memory_limit(value)
    except StoreError as e:
        raise typer.BadParameter(str(e)) from None

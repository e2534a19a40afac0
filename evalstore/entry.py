"""The ``evalstore`` console script: ``--version`` answers at once; every other command line goes to
the Typer application (:mod:`evalstore.cli`), which loads what its commands need."""

from __future__ import annotations

import sys


def version_line() -> str:
    """``evalstore <version> (duckdb <version>)``, without importing DuckDB."""
    from importlib.metadata import PackageNotFoundError, version

    from .version import __version__

    try:
        duckdb_version = version("duckdb")
    except PackageNotFoundError:  # pragma: no cover (a broken install)
        import duckdb

        duckdb_version = duckdb.__version__
    return f"evalstore {__version__} (duckdb {duckdb_version})"


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    from .cli import main as cli_main

    cli_main()

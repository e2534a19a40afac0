"""The ``evalstore`` console script: ``--version`` answers at once; every other command line goes to
the Typer application (:mod:`evalstore.cli`), which loads what its commands need."""

from __future__ import annotations

import os
import sys

from .version import __version__


def version_line() -> str:
    """``evalstore <version> (duckdb <version>)``, without importing DuckDB."""
    from importlib.metadata import PackageNotFoundError, version

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
    _arrow_without_pandas()
    _arrow_memory_pool()
    _openblas_threads_sleep()
    from .cli import main as cli_main  # after the start-up above: `--version` answers without the CLI

    cli_main()


def _arrow_without_pandas() -> None:
    """Tell pyarrow, in this command-line process, that pandas is not there.

    With pandas installed, pyarrow imports it (0.3-0.4 CPU seconds) the first time it converts
    anything (``pa.array``, ``to_numpy``, a scalar), to test whether the object is a pandas one. The
    command line hands Arrow no DataFrame and turns no table into one (DataFrames are
    :meth:`evalstore.results.eval_result.EvalResult.to_df` and ``QueryResult.df()``, library calls), so its
    process imports pandas for nothing. ``EVALSTORE_PANDAS=1`` keeps pandas importable."""
    if os.environ.get("EVALSTORE_PANDAS") or "pandas" in sys.modules:
        return
    sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    """A module finder that answers "no such module" for pandas."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (the evalstore command line runs without pandas)")
        return None


def _arrow_memory_pool() -> None:
    """Arrow's jemalloc pool for this process (Linux): it hands freed memory back, where Arrow's
    default (mimalloc) keeps what the reader threads once held; the one-shot evaluation of 5 M lines
    then peaks ~40 MB lower. ``ARROW_DEFAULT_MEMORY_POOL`` set by the user wins."""
    if sys.platform.startswith("linux"):
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")


def _openblas_threads_sleep() -> None:
    """OpenBLAS's worker threads (numpy's BLAS, one a core) go to sleep at once when idle.

    OpenBLAS starts them when numpy is imported, and each spins for 2**28 cycles (about 0.1 s)
    before it sleeps, after every call and after its start: on 2 cores ``import numpy`` cost
    0.18-0.23 CPU seconds instead of 0.08-0.13, in every command, most of which never multiply a
    matrix. With a timeout of 2**4 cycles the threads sleep when idle and still share the work of
    a large product (the resampling of ``compare``, ``--ci``). Set before numpy is imported; a
    value the user set (``OPENBLAS_THREAD_TIMEOUT``) wins."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

"""The one rule for numeric options: every number a command takes has a documented range, checked
while the command line is parsed (exit 2, before any work).

An option is declared with :func:`number` and a :class:`Range`; its help ends with the range in
the notation of ``--help`` (``[1<=x<=100000000]``, ``[0<x<1]``), and a value outside it, or a
float that is not finite (``nan``, ``inf``), is a usage error naming the option and the range.
Ranges shared by several commands are declared once here (:data:`TRIALS`, :data:`SEED`, ...).
``tests/evalstore/cli/test_ranges.py`` checks that every int and float option of every command is
declared this way and refuses a value outside its range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import typer

INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Range:
    """``lo <= x <= hi`` (``<`` where open; None: unbounded on that side, though a float must
    still be finite)."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    #: said after the range when a value is refused (what the value means, a common mistake)
    hint: str = ""

    def describe(self) -> str:
        left = f"{_num(self.lo)}{'<' if self.lo_open else '<='}" if self.lo is not None else ""
        right = f"{'<' if self.hi_open else '<='}{_num(self.hi)}" if self.hi is not None else ""
        return f"{left}x{right}"

    def contains(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo):
            return False
        if self.hi is not None and (value >= self.hi if self.hi_open else value > self.hi):
            return False
        return True

    def check(self, value: Any) -> Any:
        """``value`` if it is None or inside the range, else :class:`typer.BadParameter`."""
        if value is None:
            return value
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if not self.contains(v):
                hint = f" ({self.hint})" if self.hint else ""
                raise typer.BadParameter(f"{_shown(v)} is outside the range {self.describe()}{hint}")
        return value


def number(default: Any, *flags: str, range: Range, help: str, **kwargs: Any) -> Any:  # noqa: A002
    """A numeric ``typer.Option`` checked against ``range`` at parse time; the range is appended to
    its help (so ``--help`` and docs/cli.md document it)."""

    def callback(value: Any) -> Any:
        return range.check(value)

    return typer.Option(default, *flags, help=f"{help} [{range.describe()}]", callback=callback, **kwargs)


def _num(x: float | None) -> str:
    """A bound as ``--help`` shows it: short enough for an 80-column terminal (``2^63-1``, not its
    19 digits, which the help's column would cut)."""
    if x is None:
        return ""
    if isinstance(x, int) and x > 10**9 and (x + 1).bit_count() == 1:
        return f"2^{(x + 1).bit_length() - 1}-1"
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e16):
        return str(int(x))
    return f"{x:g}"


def _shown(v: Any) -> str:
    text = repr(v) if isinstance(v, float) else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------- shared ranges
#: resamples B of a Monte-Carlo test, bootstrap or swap method (memory: see --memory-limit)
TRIALS = Range(1, 100_000_000)
#: a random seed (stored as a BIGINT)
SEED = Range(0, INT64_MAX)
#: a significance level (below 1e-6 no test here resolves it: B is at most 10^8, and the design's
#: power computations lose their precision)
ALPHA = Range(1e-6, 0.5)
#: a confidence level
LEVEL = Range(0.5, 1, hi_open=True, hint="the confidence level is a fraction: 0.95, not 95")
#: a rank depth or cut-off (trec_eval -M); DuckDB's INTEGER
DEPTH = Range(1, INT32_MAX)
#: DuckDB worker threads
THREADS = Range(1, 1024)
#: seconds to wait for a busy store
WAIT = Range(0, 86_400)
#: a relevance grade (the lowest relevant one)
GRADE = Range(1, INT32_MAX)
#: a number of documents (at least)
COUNT = Range(0, INT32_MAX)
#: a number of runs
RUNS = Range(1, INT32_MAX)
#: subsamples per fraction
SUBSAMPLE_TRIALS = Range(1, 100_000)
#: a rate or threshold between 0 and 1
RATE = Range(0, 1, lo_open=True)
#: a probability strictly between 0 and 1 (RBO's persistence)
PROBABILITY = Range(0, 1, lo_open=True, hi_open=True)
#: the rank cut of KTU and RBO: any size (the work stops at the longest ranking)
CUT = Range(1, INT64_MAX)
#: a type II error rate
BETA = Range(1e-6, 1, hi_open=True)
#: a minimum detectable difference (or CI width): positive and finite
MIN_DIFF = Range(0, 1e9, lo_open=True)
#: a grid step (fuse --optimize): positive and finite (the grid's size is checked by the library)
STEP = Range(0, 1e9, lo_open=True)
#: systems compared by one-way ANOVA
SYSTEMS = Range(2, 1_000_000)
#: rows of a table to show
ROWS = Range(0, 10_000_000)
#: RRF's k (1 / (k + rank)): any finite number from 0 on
RRF_K = Range(0, 1e9)
#: a TCP port (0: any free one)
PORT = Range(0, 65535)
#: seconds a query of the SQL page may run
SQL_SECONDS = Range(0.1, 3600)

"""Progress bars (rich) for long ingests, bulk evaluations and resampling.

Shown on a terminal (stderr is a TTY) unless disabled; ``enabled=True`` forces them on,
``False`` off. Without a terminal nothing is printed, so pipes and CI logs stay clean.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager


class _NullBar:
    def advance(self, n: int = 1) -> None:
        pass

    def update(self, **kwargs) -> None:
        pass


#: A bar that shows nothing (work done without a terminal to show it on).
NO_BAR = _NullBar()


class _RichBar:
    def __init__(self, progress, task):
        self._p, self._t = progress, task

    def advance(self, n: int = 1) -> None:
        self._p.advance(self._t, n)

    def update(self, **kwargs) -> None:
        self._p.update(self._t, **kwargs)


@contextmanager
def progress_bar(total: int, label: str, *, enabled: bool | None = None, min_total: int = 2, transient: bool = False):
    """Context manager yielding an object with ``advance(n=1)`` and ``update(description=...)``.

    ``enabled=None`` shows the bar when stderr is a terminal and ``total >= min_total``.
    ``transient=True`` erases the bar when the block ends (for steps that print a summary).
    """
    if enabled is None:
        enabled = sys.stderr.isatty() and total >= min_total
    if not enabled:
        yield _NullBar()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=transient,
    ) as p:
        yield _RichBar(p, p.add_task(label, total=total))

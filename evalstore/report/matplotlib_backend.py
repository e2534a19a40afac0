"""The matplotlib backend of the figures: :func:`pyplot` (matplotlib on the Agg backend, imported
when a figure is drawn), :func:`save_figure` (PNG, or SVG with text as text and no random ids or
date) and :func:`draw_lines` (a :class:`~.figures.LineFigure` on a matplotlib axes). The web's
SVG backend draws the same figure models (:mod:`evalstore.web.svg`)."""

from __future__ import annotations

import os
from typing import Any

from .figures import LineFigure


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | os.PathLike) -> str:
    """Write the figure as PNG, or as SVG when ``path`` ends in .svg (text as text, no random ids
    or date: the same figure gives the same file); close it; return the path."""
    import matplotlib

    fig.tight_layout()
    svg = os.fspath(path).lower().endswith(".svg")
    rc: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "evalstore"} if svg else {}
    with matplotlib.rc_context(rc):  # type: ignore[arg-type]
        # bbox_inches: nothing cut (long labels, a legend beside the axes)
        fig.savefig(
            path, dpi=120, bbox_inches="tight", format="svg" if svg else "png", metadata={"Date": None} if svg else None
        )
    pyplot().close(fig)
    return os.fspath(path)


def draw_lines(ax: Any, figure: LineFigure, title: str | None = None) -> None:
    """The figure's series as lines with points, its reference line, labels, title and legend."""
    for s in figure.series:
        xs = [x for x, y in zip(s.x, s.y) if y is not None]
        ys = [y for y in s.y if y is not None]
        ax.plot(xs, ys, marker="o", ms=3, label=s.label)
    if figure.hline is not None:
        ax.axhline(figure.hline, color="grey", ls="--", lw=1)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.set_title(title or figure.title, fontsize=10)
    ax.legend(fontsize=8)

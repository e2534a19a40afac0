"""The matplotlib backend of the figure models (:mod:`.figures.model`): :func:`save` draws a model
(one figure or :class:`~.figures.model.Panels`) and writes it as PNG or SVG; :func:`pyplot`
(matplotlib on the Agg backend, imported when a figure is drawn), :func:`save_figure` and the
``draw_*`` functions (a model on one matplotlib axes) are its parts. The web's SVG backend draws
the same models (:mod:`evalstore.web.figure_charts` and the macros of ``web/templates/figures.html``)."""

from __future__ import annotations

import math
import os
from typing import Any

from ..base.output_file import replacing
from .figures.model import (
    BarFigure,
    Boxes,
    DifferenceLines,
    DifferenceMap,
    Figure,
    HeatMap,
    Intervals,
    LineFigure,
    Panels,
    RankSlopes,
    Scatter,
)

MARKERS = "os^vD<>Pp*"
MARK_SIGNS = {"better": " ▲", "worse": " ▼"}


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
        with replacing(path, binary=True) as fh:  # whole or not at all
            fig.savefig(
                fh,
                dpi=120,
                bbox_inches="tight",
                format="svg" if svg else "png",
                metadata={"Date": None} if svg else None,
            )
    pyplot().close(fig)
    return os.fspath(path)


def size(figure: Figure) -> tuple[float, float]:
    """The size (inches) of one panel, from what it shows."""
    if isinstance(figure, HeatMap):
        k = len(figure.labels)
        return 1.2 * k + 3, 1.0 * k + 2
    if isinstance(figure, BarFigure):
        return 5.2, max(4.5, 0.5 * len(figure.labels) * len(figure.groups) + 1.8)
    if isinstance(figure, Boxes):
        return max(6.0, 0.45 * len(figure.labels) + 2), 3.6
    if isinstance(figure, DifferenceMap):
        return max(6.0, min(18.0, 0.16 * len(figure.topics) + 3.0)), max(3.5, 0.22 * len(figure.runs) + 1.8)
    if isinstance(figure, DifferenceLines):
        return 7.5, 4.2
    if isinstance(figure, Intervals):
        return 7.0, max(3.0, 0.3 * len(figure.labels) + 1.5)
    if isinstance(figure, Scatter):
        return 6.0, 4.8
    if isinstance(figure, RankSlopes):
        longest = max((min(len(s), 30) for s in figure.labels), default=4)
        return 2.5 + 0.14 * longest, max(3.0, 0.22 * len(figure.labels) + 1.2)
    return 7.0, 4.8


def save(figure: Figure | Panels, path: str | os.PathLike) -> str:
    """Draw a figure model (each panel of :class:`Panels` on its own axes) and write it to ``path``
    (PNG, or SVG by the extension); return the path."""
    plt = pyplot()
    panels = figure.panels if isinstance(figure, Panels) else [figure]
    columns = figure.columns if isinstance(figure, Panels) else 1
    rows = math.ceil(len(panels) / columns)
    sizes = [size(p) for p in panels]
    width = sum(w for w, _ in sizes[:columns]) if columns > 1 else max(w for w, _ in sizes)
    height = sum(max(h for _, h in sizes[r * columns : (r + 1) * columns]) for r in range(rows))
    widths = figure.widths if isinstance(figure, Panels) and figure.widths else None
    fig, axes = plt.subplots(
        rows, columns, figsize=(width, height), squeeze=False, gridspec_kw={"width_ratios": widths} if widths else None
    )
    for ax, panel in zip(axes.ravel(), panels):
        DRAW[type(panel)](fig, ax, panel)
    if isinstance(figure, Panels) and figure.title:
        fig.suptitle(figure.title)
    return save_figure(fig, path)


def draw_lines(fig: Any, ax: Any, figure: LineFigure) -> None:
    """The series as lines (with points unless ``markers`` is off), the reference line, labels, title, legend."""
    for s in figure.series:
        xs = [x for x, y in zip(s.x, s.y) if y is not None]
        ys = [y for y in s.y if y is not None]
        ax.plot(xs, ys, marker="o" if figure.markers else None, ms=3, linewidth=1.2, label=s.label)
    if figure.hline is not None:
        ax.axhline(figure.hline, color="grey", ls="--", lw=1)
    if figure.reverse_x:
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.set_title(figure.title, fontsize=10)
    ax.legend(fontsize=8)


def draw_bars(fig: Any, ax: Any, figure: BarFigure) -> None:
    """Horizontal bars, a row per label and a bar per group in it, each with its text."""
    import numpy as np

    k = len(figure.groups)
    height = 0.8 / k
    y = np.arange(len(figure.labels))
    for g, (name, values, texts) in enumerate(zip(figure.groups, figure.values, figure.texts)):
        yy = y - 0.4 + height * (g + 0.5)
        ax.barh(yy, values, height, color=f"C{(g + 2) % 10}" if k == 1 else f"C{g}", label=name or None)
        for yi, v, t in zip(yy, values, texts):
            ax.text(v, yi, " " + t, va="center", fontsize=8)
    ax.set_yticks(y, figure.labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max([v for vs in figure.values for v in vs] + [1.0]) * 1.4)
    ax.set_xlabel(figure.xlabel)
    ax.set_title(figure.title, fontsize=10)
    if k > 1:
        ax.legend(fontsize=8)


def draw_heatmap(fig: Any, ax: Any, figure: HeatMap) -> None:
    import numpy as np

    M = np.array([[np.nan if v is None else v for v in row] for row in figure.values], dtype=float)
    k = len(figure.labels)
    im = ax.imshow(M, vmin=figure.vmin, vmax=figure.vmax, cmap="viridis")
    ax.set_xticks(range(k), figure.labels, rotation=45, ha="right")
    ax.set_yticks(range(k), figure.labels)
    for i in range(k):
        for j in range(k):
            if i != j and np.isfinite(M[i, j]):
                colour = "white" if M[i, j] < 0.7 else "black"
                ax.text(j, i, f"{M[i, j]:.3f}", ha="center", va="center", color=colour, fontsize=9)
    fig.colorbar(im, ax=ax, label=figure.scale_label)
    ax.set_title(figure.title, fontsize=10)


def draw_boxes(fig: Any, ax: Any, figure: Boxes) -> None:
    ax.boxplot(figure.values, showmeans=True)
    ax.set_xticks(range(1, len(figure.labels) + 1), figure.labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(figure.ylabel)
    ax.set_title(figure.title, fontsize=10)


def draw_difference_lines(fig: Any, ax: Any, figure: DifferenceLines) -> None:
    import matplotlib

    colour = matplotlib.colormaps["tab10"]
    x = list(range(1, len(figure.topics) + 1))
    for i, (run, mark, values) in enumerate(zip(figure.runs, figure.marks, figure.values)):
        label = f"{run} ({mark})" if mark else run
        ax.plot(
            x, values, marker=MARKERS[i % len(MARKERS)], markersize=3, linewidth=1, color=colour(i % 10), label=label
        )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.set_title(figure.title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def draw_difference_map(fig: Any, ax: Any, figure: DifferenceMap) -> None:
    import numpy as np

    d = np.asarray(figure.values, dtype=float)
    lim = float(np.nanmax(np.abs(d))) if d.size else 0.0
    lim = lim or 1.0
    img = ax.imshow(d, aspect="auto", cmap="RdBu", vmin=-lim, vmax=lim, interpolation="nearest")
    ax.set_yticks(
        range(len(figure.runs)), [r + MARK_SIGNS.get(m, "") for r, m in zip(figure.runs, figure.marks)], fontsize=7
    )
    step = max(1, len(figure.topics) // 60)
    ticks = range(0, len(figure.topics), step)
    ax.set_xticks(ticks, [figure.topics[j] for j in ticks], rotation=90, fontsize=6)
    ax.set_xlabel(figure.xlabel)
    ax.set_title(figure.title, fontsize=10)
    cb = fig.colorbar(img, ax=ax, fraction=0.03, pad=0.01)
    cb.set_label(figure.scale_label, fontsize=8)


def draw_scatter(fig: Any, ax: Any, figure: Scatter) -> None:
    if figure.vline is not None:
        ax.axvline(figure.vline, color="grey", linewidth=0.8)
    if figure.hline is not None:
        ax.axhline(figure.hline, color="grey", linewidth=0.8)
    shown = [p for p in figure.points if p.x is not None and p.y is not None]
    ax.scatter([p.x for p in shown], [p.y for p in shown], marker="o")
    for p in shown:
        ax.annotate(p.label, (p.x, p.y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.set_title(figure.title, fontsize=9)


def draw_intervals(fig: Any, ax: Any, figure: Intervals) -> None:
    y = list(range(len(figure.labels)))
    for yi, lo, hi in zip(y, figure.lows, figure.highs):
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [yi, yi], color="C9", linewidth=3)
    ax.plot([v if v is not None else math.nan for v in figure.estimates], y, "o", color="C0")
    if figure.reference is not None:
        ax.axvline(figure.reference, color="grey", ls="--", lw=1)
    ax.set_yticks(y, figure.labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(figure.xlabel)
    ax.set_title(figure.title, fontsize=10)


def draw_slopes(fig: Any, ax: Any, figure: RankSlopes) -> None:
    """A line per item from its left rank to its right rank (rows in rank order on each side, tied
    items one below the other by name), the marked ones in orange and thicker; labels at both ends."""
    n = len(figure.labels)
    items = range(n)
    left_row = {i: k for k, i in enumerate(sorted(items, key=lambda i: (figure.left_ranks[i], figure.labels[i])))}
    right_row = {i: k for k, i in enumerate(sorted(items, key=lambda i: (figure.right_ranks[i], figure.labels[i])))}
    for i in items:
        marked = figure.marks[i]
        same = figure.left_ranks[i] == figure.right_ranks[i]
        colour = "C1" if marked else ("C0" if same else "grey")
        ax.plot([0, 1], [left_row[i], right_row[i]], color=colour, lw=2.0 if marked else 1.0, marker="o", ms=3)
        ax.text(-0.04, left_row[i], f"{figure.left_ranks[i]}. {figure.labels[i]}", ha="right", va="center", fontsize=7)
        ax.text(1.04, right_row[i], f"{figure.right_ranks[i]}. {figure.labels[i]}", ha="left", va="center", fontsize=7)
    ax.set_xlim(-0.9, 1.9)
    ax.set_ylim(n - 0.5, -1.2)
    ax.text(0, -0.9, figure.left, ha="center", fontsize=8, fontweight="bold")
    ax.text(1, -0.9, figure.right, ha="center", fontsize=8, fontweight="bold")
    ax.axis("off")
    ax.set_title(figure.title, fontsize=9)


#: The function that draws each kind of figure on a matplotlib axes.
DRAW: dict[type, Any] = {
    LineFigure: draw_lines,
    BarFigure: draw_bars,
    HeatMap: draw_heatmap,
    Boxes: draw_boxes,
    DifferenceLines: draw_difference_lines,
    DifferenceMap: draw_difference_map,
    Scatter: draw_scatter,
    Intervals: draw_intervals,
    RankSlopes: draw_slopes,
}

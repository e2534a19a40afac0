"""The figures as plain data, each derived once from what an analysis yields: series, axis labels,
titles. The backends draw them: matplotlib (:mod:`.matplotlib_backend`: ``--plot FILE.png|.svg``)
and the web's SVG (:mod:`evalstore.web.svg`), so a figure says the same in a paper and a browser.

The inputs are plain values (bins as ``(lower edge, comparisons, swap rate)``), read from an
analysis in memory or from its stored rows alike; this module imports nothing above ``report/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Series:
    label: str
    x: list[float]
    y: list[float | None]


@dataclass(frozen=True)
class LineFigure:
    """Lines over a shared x axis, with an optional horizontal reference line."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    hline: float | None = None
    hline_label: str | None = None


#: one swap figure's bins: (lower edge of the bin, comparisons in it, swap rate as a fraction or None)
SwapBins = Sequence[tuple[float, int, float | None]]


def swap_rates(columns: Sequence[tuple[str, SwapBins]], max_rate: float) -> LineFigure:
    """The swap rate per difference bin of each column (Sakai, IPSJ 2007, Fig. 4), in percent; only
    the bins that hold comparisons; the reference line at ``max_rate``."""
    series = [
        Series(label, [lo for lo, n, _ in bins if n], [None if r is None else 100 * r for _, n, r in bins if n])
        for label, bins in columns
    ]
    return LineFigure(
        title="Swap rate per difference bin",
        xlabel="absolute difference between the two means (lower edge of the bin; the last bin holds all above)",
        ylabel="swap rate (%)",
        series=series,
        hline=100 * max_rate,
        hline_label=f"{100 * max_rate:g} %",
    )

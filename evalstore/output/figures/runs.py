"""The figures of runs: per-topic scores (``eval --plot``), per-topic differences against a
baseline (``compare --plot``) and a reproduction's ER against ΔRI (``repro --plot``), each built
once, in the order :mod:`evalstore.output.figure_data` tabulates them (its ordering helpers)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import figure_data
from .model import Boxes, DifferenceLines, DifferenceMap, Panels, Point, Scatter

#: Runs up to which ``compare --plot`` draws a line per run; beyond it, a heat map.
LINE_PLOT_MAX_RUNS = 10


def scores(result: Any, title: str = "") -> Panels:
    """A box plot per run, a panel per metric; runs by their mean of the first metric, best first."""
    metrics, runs = figure_data.score_runs(result)
    values: dict[tuple[str, str], list[float]] = {}
    for m, r, _, _, v in figure_data.scores(result).rows:
        values.setdefault((r, m), []).append(v)
    panels = [
        Boxes(
            title=f"{title + ': ' if title else ''}{m} per topic, by run (triangle = mean)",
            ylabel=f"{m} per topic",
            labels=list(runs),
            values=[values.get((r, m), []) for r in runs],
        )
        for m in metrics
    ]
    return Panels(title="", panels=list(panels))


def compare(cmp: Any) -> Panels:
    """Per metric, each run's per-topic difference to the baseline, every run's topics in one order
    (the mean difference over the runs, largest first). Up to :data:`LINE_PLOT_MAX_RUNS` runs: a line
    per run; more: a heat map (runs by their mean difference)."""
    heat = len(cmp.runs) - 1 > LINE_PLOT_MAX_RUNS
    panels: list[Any] = []
    for m, label in zip(cmp.matrices, cmp.metrics):
        d = m.values[1:] - m.values[0]
        order = figure_data.topic_order(d)
        d = d[:, order]
        topics = [m.topics[j] for j in order]
        title = f"{cmp.qrels}: {label} of each run minus {cmp.baseline} ({cmp.test} test"
        if heat:
            rows = np.argsort(-d.mean(axis=1), kind="stable").tolist()
            runs = [m.runs[1:][i] for i in rows]
            panels.append(
                DifferenceMap(
                    title=title + "; ▲ / ▼ significantly better / worse)",
                    xlabel="topics, by the mean difference over the runs",
                    scale_label=f"{label}: run - baseline",
                    topics=topics,
                    runs=runs,
                    marks=[figure_data.significance(cmp, r, label) for r in runs],
                    values=d[rows].tolist(),
                )
            )
        else:
            runs = list(m.runs[1:])
            panels.append(
                DifferenceLines(
                    title=title + ")",
                    xlabel="topics, by the mean difference over the runs (the same order for every run)",
                    ylabel=f"{label}: run - baseline",
                    topics=topics,
                    runs=runs,
                    marks=[figure_data.significance(cmp, r, label) for r in runs],
                    values=d.tolist(),
                )
            )
    return Panels(title="", panels=panels)


def er_dri(r: Any) -> Scatter:
    """ER (x) against ΔRI (y), a point per metric, as Breuer et al. (2020) Fig. 2: a perfect
    reproduction sits at (1, 0)."""

    def value(v: Any) -> float | None:
        return None if v is None or not math.isfinite(float(v)) else float(v)

    runs = r.runs
    return Scatter(
        title=f"{r.kind}: {runs['rep_baseline']}/{runs['rep_advanced']} vs {runs['baseline']}/{runs['advanced']}",
        xlabel="Effect Ratio (ER)",
        ylabel="ΔRI",
        points=[Point(m, value(r.er[m]), value(r.dri[m])) for m in r.metrics],
        vline=1.0,
        hline=0.0,
    )

"""The figures of ``--plot FILE.png|.svg`` (matplotlib, Agg backend: no display needed; SVG keeps
text as text, so it can be restyled): each ``plot_*`` builds the figure's model once
(:mod:`.figures`) and draws it with :mod:`.matplotlib_backend`. The web draws the same models as
SVG; ``--plot-data`` writes the values drawn as a table (:mod:`.figure_data`).

* :func:`plot_kendall`: heat map of Kendall's tau between columns (Sakai IPSJ 2007 Table 2 as a picture);
* :func:`plot_swap`: swap rate per difference bin, one line per column, the 5 % line (Sakai IPSJ 2007
  Fig. 4's output), and the share of comparisons meeting the required difference (Sakai IPSJ 2007 Fig. 9);
* :func:`plot_discpower`: ASL curves and discriminative power per column (Sakai IPSJ 2007 Figs. 6 and
  10, Sakai SIGIR 2007 Table 3);
* :func:`plot_tests`: discriminative power per test and column;
* :func:`plot_robustness`: Kendall's tau, discriminative power, accuracy and g-mean against the
  share of judgments kept (Sakai SIGIR 2007 Figs. 2-3, Bompada et al. 2007 Figs. 1-2);
* :func:`plot_reusability`: each run's rank with and without its group's unique documents, a
  slope chart per metric;
* :func:`plot_compare`: per-topic differences against the baseline (``compare --plot``);
* :func:`plot_scores`: per-topic scores as a box plot per run (``eval --plot``);
* :func:`plot_er_dri`: ER against ΔRI, one point per metric (``repro --plot``).

Each ``plot_<name>`` has its data in :mod:`.figure_data` as ``<name>``: the command line reaches both
by the figure's name (:func:`evalstore.cli.figures.write`), so a command that draws nothing loads
neither.
"""

from __future__ import annotations

import os
from typing import Any

from .figures import analyses, runs
from .figures.model import Figure, Panels
from .matplotlib_backend import save

Path = str | os.PathLike


def _save(figure: Figure | Panels | None, path: Path) -> str:
    if figure is None:
        raise ValueError("the analysis has no rows to draw")
    return save(figure, path)


def plot_kendall(analysis: Any, path: Path, stat: str = "tau") -> str:
    return _save(analyses.kendall(analysis, stat), path)


def plot_swap(analysis: Any, path: Path) -> str:
    return _save(analyses.swap(analysis), path)


def plot_discpower(analysis: Any, path: Path) -> str:
    return _save(analyses.discpower(analysis), path)


def plot_tests(analysis: Any, path: Path) -> str:
    return _save(analyses.tests(analysis), path)


def plot_robustness(analysis: Any, path: Path) -> str:
    curves = analysis.results["curves"]
    return _save(analyses.robustness(curves, analysis.params, len(analysis.inputs["runs"])), path)


def plot_reusability(analysis: Any, path: Path) -> str:
    return _save(analyses.reusability(analysis), path)


def plot_compare(cmp: Any, path: Path) -> str:
    return _save(runs.compare(cmp), path)


def plot_scores(result: Any, path: Path, title: str = "") -> str:
    return _save(runs.scores(result, title), path)


def plot_er_dri(r: Any, path: Path) -> str:
    """ER (x) against ΔRI (y), one point per metric, as Breuer et al. (2020) Fig. 2: a perfect
    reproduction sits at (1, 0); right of 1 the reproduced effect is larger, below 0 its relative
    improvement is larger (:func:`evalstore.output.figures.runs.er_dri`)."""
    return _save(runs.er_dri(r), path)

"""``--plot FILE`` and ``--plot-data FILE``: every figure of the command line, and its data.

``--plot`` draws the figure as PNG or SVG, by the file's extension (:mod:`evalstore.output.plots`);
``--plot-data`` writes the values it draws as a table (:mod:`evalstore.output.figure_data`) in a
data format of :data:`~evalstore.output.formats.OUTPUT_FORMATS` chosen by the extension (.csv,
.tsv, .json, .parquet), to restyle or redraw the figure with any tool. Either may go alone. Both
paths are checked before any work.

A command names its figure (:func:`write`): the figures' models and their drawing are loaded when
one is asked for, not by every command line that could draw one (``evalstore eval QRELS RUN``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer

from ..output.formats import FIGURE_EXTENSIONS, FormatMismatch, file_format
from .output import check_writable, emit, say

DATA_KINDS = ("data",)


def plot_option(what: str) -> Any:
    """The ``--plot`` option of a command whose figure shows ``what``."""
    return typer.Option(
        None, "--plot", help=f"Also draw {what} to this file: PNG or SVG, by its extension (.png, .svg)."
    )


PlotData = typer.Option(
    None,
    "--plot-data",
    help="Also write the figure's data (the values drawn, in the order drawn) as a table to this file: .csv, .tsv, "
    ".json or .parquet, by its extension; to restyle or redraw the figure with another tool.",
)


def check(plot: str | None, plot_data: str | None) -> str | None:
    """Check both paths before any work; the data file's format."""
    check_writable(plot, "--plot", FIGURE_EXTENSIONS)
    if not plot_data:
        return None
    check_writable(plot_data, "--plot-data")
    try:
        return file_format(None, plot_data, DATA_KINDS)
    except FormatMismatch as e:
        raise typer.BadParameter(str(e), param_hint="--plot-data") from None


def write(
    plot: str | None,
    plot_data: str | None,
    figure: str,
    analysis: Any,
    drawn: Sequence[Any] = (),
    data: Sequence[Any] = (),
) -> None:
    """Draw the figure named ``figure`` of ``analysis`` where --plot asks
    (:mod:`evalstore.output.plots`' ``plot_<figure>(analysis, path, *drawn)``) and write its data
    where --plot-data asks (:mod:`evalstore.output.figure_data`'s ``<figure>(analysis, *data)``)."""
    if not plot and not plot_data:
        return
    from ..output import figure_data, plots  # the figures' models and matplotlib: when a figure is asked for

    if plot:
        getattr(plots, f"plot_{figure}")(analysis, plot, *drawn)
        say(f"wrote {plot}")
    if plot_data:
        fmt = check(None, plot_data)
        assert fmt is not None
        emit(getattr(figure_data, figure)(analysis, *data), fmt, plot_data)

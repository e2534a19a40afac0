"""``--plot FILE`` and ``--plot-data FILE``: every figure of the command line, and its data.

``--plot`` draws the figure as PNG or SVG, by the file's extension (:mod:`evalstore.output.plots`);
``--plot-data`` writes the values it draws as a table (:mod:`evalstore.output.figure_data`) in a
data format of :data:`~evalstore.output.formats.OUTPUT_FORMATS` chosen by the extension (.csv,
.tsv, .json, .parquet), to restyle or redraw the figure with any tool. Either may go alone. Both
paths are checked before any work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from ..output.formats import FormatMismatch, file_format
from ..output.plots import FIGURE_EXTENSIONS
from ..output.table import Table
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


def write(plot: str | None, plot_data: str | None, draw: Callable[[str], object], data: Callable[[], Table]) -> None:
    """Draw the figure (``draw(path)``) and write its data (``data()``) where asked."""
    if plot:
        draw(plot)
        say(f"wrote {plot}")
    if plot_data:
        fmt = check(None, plot_data)
        assert fmt is not None
        emit(data(), fmt, plot_data)

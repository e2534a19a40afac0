"""Comparing runs against a baseline (``evalstore compare``): means per metric with significance
markers, multiple-comparison adjustments, effect sizes and confidence intervals, and the tables
for a paper (Markdown, LaTeX). :mod:`.core` computes and stores (the effect sizes from
:mod:`evalstore.meta.effects`), :mod:`.result` holds a :class:`Comparison` and turns it into tables."""

from .core import TESTS, Comparison, compare
from .result import format_p, latex, markdown

__all__ = ["TESTS", "Comparison", "compare", "format_p", "latex", "markdown"]

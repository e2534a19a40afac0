"""Comparing runs against a baseline (``evalstore compare``): means per metric with significance
markers, multiple-comparison adjustments, effect sizes and confidence intervals, and the tables
for a paper (Markdown, LaTeX). :mod:`.core` computes and stores (the effect sizes from
:mod:`evalstore.stats.effects`), :mod:`.result` holds a :class:`Comparison` and turns it into tables;
:mod:`.contrast` ranks the topics by how differently two runs rank documents (RBO, the relevant
documents that moved most)."""

from .contrast import Contrast, contrast
from .core import TESTS, Comparison, compare
from .result import format_p, latex, markdown

__all__ = ["TESTS", "Comparison", "Contrast", "compare", "contrast", "format_p", "latex", "markdown"]

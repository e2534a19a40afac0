"""The effect sizes in a comparison's paper table (``compare --effects``): beside each metric's
mean, Δ (the run's mean minus the baseline's) with its 95 % confidence interval, and Cohen's d_z
when asked (``--dz``).

The interval is the one of the test: the bootstrap percentile interval with ``--test bootstrap``
(the B topic samples the effects draw), the paired t interval with every other test (the t-test's
own; the rank and permutation tests have no interval of the mean difference). Each comparison's
values are :mod:`evalstore.comparison.core`'s effect rows, so the table and ``--format csv|json``
(every column: both intervals, d_z, Sakai's SMD) agree to the last bit.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..output.table import Estimate
from ..output.text import count


class Comparison(Protocol):
    """What the effect columns read of a :class:`~evalstore.comparison.result.Comparison`."""

    baseline: str
    test: str
    adjust: str
    trials: int | None
    seed: int | None
    n_topics: list[int]
    effects: list[dict[str, Any]]


#: Decimals of d_z in the table (an effect size is read to two).
DZ_DIGITS = 2


def interval_of(cmp: Comparison) -> str:
    """``'boot'`` (bootstrap percentile) with the bootstrap test, else ``'t'``."""
    return "boot" if cmp.test == "bootstrap" else "t"


def heads(label: str, dz: bool) -> list[tuple[str, str]]:
    """(column name, sub-head under the metric's spanning head) of one metric's columns."""
    out = [(label, "mean"), (f"Δ {label} [95% CI]", "Δ [95% CI]")]
    return out + [(f"d_z {label}", "d_z")] if dz else out


def cells(cmp: Comparison, run: str, stored: str, dz: bool) -> list[Any]:
    """The effect cells of ``run`` on one metric (``stored``: its name in the effect rows): Δ [lo,
    hi] against the baseline (and d_z); the baseline's own cells are empty."""
    e = _effect(cmp, run, stored)
    if e is None:
        return [None, None] if dz else [None]
    ci = interval_of(cmp)
    sign = 1.0 if e["run"] == run else -1.0  # the row's run minus the baseline, whichever way it was tested
    lo, hi = sorted((sign * e[f"ci_{ci}_lo"], sign * e[f"ci_{ci}_hi"]))
    out: list[Any] = [Estimate(sign * e["diff"], lo, hi)]
    if dz:
        out.append(None if e["d_z"] is None else Estimate(sign * e["d_z"], digits=DZ_DIGITS))
    return out


def _effect(cmp: Comparison, run: str, stored: str) -> dict[str, Any] | None:
    if run == cmp.baseline:
        return None
    for e in cmp.effects:
        if e["metric"] == stored and {e["run"], e["other"]} == {run, cmp.baseline}:
            return e
    return None


def legend(cmp: Comparison, dz: bool) -> list[str]:
    """What Δ (and d_z) mean, with the interval's method."""
    n = sorted(set(cmp.n_topics))
    topics = count(n[0], "topic") if len(n) == 1 else f"{', '.join(map(str, n))} topics"
    how = (
        f"bootstrap percentile interval (B = {cmp.trials}, seed {cmp.seed})"
        if interval_of(cmp) == "boot"
        else "paired t interval"
    )
    unadjusted = " (not adjusted for multiple comparisons, as the p-values are)" if cmp.adjust != "none" else ""
    lines = [f"Δ: the run's mean minus the baseline's ({cmp.baseline}) over {topics}, with its 95% {how}{unadjusted}"]
    if dz:
        lines.append("d_z: Δ divided by the standard deviation of the per-topic differences (Cohen's d_z)")
    return lines

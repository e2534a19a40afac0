"""What the public functions accept as names, and the one rule for each: a string is one name.

``store.drop_runs("ab")`` drops the run ``ab``, never ``a`` and ``b``: every function that takes
run names, qrels set names, subsample names or metric names reads its argument through
:func:`names` (or :func:`metric_names`), so a string means one name everywhere in the API, an
iterable of strings several, and anything else is an :class:`~evalstore.errors.ArgumentError`
saying what was given.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ArgumentError, MetricError


def names(value: Any, what: str) -> list[str]:
    """``value`` as a list of names (``what``: "run", "qrels set", ...): a string is one name, an
    iterable of strings several (in order, each once)."""
    if isinstance(value, str):
        items: list[Any] = [value]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, bytearray, dict)):
        items = list(value)
    else:
        raise ArgumentError(f"give a {what} name or a list of {what} names, not {_shown(value)}")
    bad = [x for x in items if not isinstance(x, str)]
    if bad:
        raise ArgumentError(f"a {what} name is a string, not {_shown(bad[0])}")
    return list(dict.fromkeys(items))


def metric_names(value: Any) -> list[str]:
    """Metric names: a string, or an iterable of strings or of ir_measures measure objects (read
    through their string form, ``nDCG@10``)."""
    if value is None:
        raise MetricError("no metric given; e.g. metrics=['AP', 'nDCG@10'] (CLI: -m AP -m nDCG@10)")
    if isinstance(value, str) or _is_measure(value):
        value = [value]
    if not isinstance(value, Iterable) or isinstance(value, (bytes, bytearray, dict)):
        raise MetricError(f"give a metric name or a list of metric names, not {_shown(value)}")
    out = []
    for m in value:
        if isinstance(m, str):
            out.append(m)
        elif _is_measure(m):
            out.append(str(m))
        else:
            raise MetricError(f"a metric is a name such as 'AP' or 'nDCG@10', not {_shown(m)}")
    if not out:
        raise MetricError("no metric given; e.g. metrics=['AP', 'nDCG@10'] (CLI: -m AP -m nDCG@10)")
    return out


def _is_measure(obj: Any) -> bool:
    """An ir_measures measure object (``ir_measures.nDCG@10``): its string form is its name."""
    return type(obj).__module__.split(".")[0] == "ir_measures"


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"

"""Canonical metric names: the one rule for the name a score is stored under.

A canonical name has the metric's registry name, every parameter sorted by name with its value
(defaults filled in), the evaluation options that change values when they are not the default
(``convention``, ``complete``, ``depth``), and the cutoff: ``nDCG(gains=grade,judged_only=false)@10``.
The gains a qrels set declares (``ingest qrels --gains``) are spelled out, so a score never
depends on a default that may change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What a gains parameter of None means once resolved against a qrels set without declared gains.
GAIN_IS_GRADE = "grade"


def format_value(v: Any) -> str:
    """A parameter value as written in names (``1:2:3``, ``true``, ``0.5``, ``default``)."""
    if v is None:
        return "default"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return ":".join(format_value(x) for x in v)
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    return str(v)


def canonical(name: str, params: Mapping[str, Any], cutoff: int | None, extra: Mapping[str, Any] | None = None) -> str:
    """``Name(p1=v1,...)@k`` with the parameters (and ``extra`` options) sorted by name."""
    items = dict(params)
    if extra:
        items.update(extra)
    inner = ",".join(f"{k}={format_value(v)}" for k, v in sorted(items.items()))
    return name + (f"({inner})" if inner else "") + (f"@{cutoff}" if cutoff is not None else "")


def resolved_params(params: Mapping[str, Any], context_gains: tuple[float, ...] | None) -> dict[str, Any]:
    """The parameters with the effective gains spelled out: the evaluation context's gains (the
    metric's own, or the qrels set's declared ones), else ``grade``."""
    out = dict(params)
    if "gains" in out and out["gains"] is None:
        out["gains"] = context_gains if context_gains is not None else GAIN_IS_GRADE
    return out

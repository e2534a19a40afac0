"""Metric names: the one rule for the name a score is stored under, and the resolved parameters.

Scores are stored under the **short canonical name**: the registry name, the parameters that
differ from their defaults (sorted by name), the evaluation options that differ from theirs
(``convention``, ``complete``, ``depth``), and the cutoff. So ``ndcg_cut_10``, ``nDCG@10`` and
``nDCG(judged_only=false)@10`` are all stored as ``nDCG@10``; ``AP(rel=2)`` stays ``AP(rel=2)``;
``map`` evaluated with ``complete=True`` is ``AP(complete=true)``. Gains equal to the qrels set's
declared default gains count as the default. Every parameter, resolved (defaults and the
effective gains filled in), is stored beside the name (``evaluations.params``, in the ``scores``
and ``leaderboard`` views) by :func:`resolved`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .spec import MetricSpec

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


def short(
    spec: MetricSpec,
    params: Mapping[str, Any],
    cutoff: int | None,
    extra: Mapping[str, Any] | None = None,
    declared_gains: tuple[float, ...] | None = None,
) -> str:
    """The stored name: only the parameters that differ from their defaults (gains equal to the
    qrels set's declared gains count as the default), then ``extra`` (non-default options)."""
    shown: dict[str, Any] = {}
    for p in spec.params:
        value = params.get(p.name, p.default)
        if p.name == "gains" and value is not None and declared_gains is not None:
            if tuple(value) == tuple(declared_gains):
                continue
        if value != p.default:
            shown[p.name] = value
    return canonical(spec.name, shown, cutoff, extra)


def resolved(
    spec: MetricSpec,
    params: Mapping[str, Any],
    cutoff: int | None,
    options: Mapping[str, Any],
    context_gains: tuple[float, ...] | None,
) -> dict[str, Any]:
    """Every parameter with its effective value (defaults filled, gains resolved against the
    qrels set: a list of gains, or ``"grade"``), the cutoff and the evaluation options."""
    out: dict[str, Any] = {"metric": spec.name}
    for p in spec.params:
        value = params.get(p.name, p.default)
        if p.name == "gains" and value is None:
            value = context_gains if context_gains is not None else GAIN_IS_GRADE
        out[p.name] = list(value) if isinstance(value, tuple) else value
    out["cutoff"] = cutoff
    out.update(options)
    if spec.user is not None:  # a measure of one's own: scores of another definition are never reused
        out["definition"] = spec.user.sha256
    return out

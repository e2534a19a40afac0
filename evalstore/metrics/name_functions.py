"""SQL functions for metric names (registered on every connection evalstore opens).

``metric_name(name VARCHAR) -> VARCHAR``
    The name a metric's scores are stored under (``scores.metric``) for any spelling:
    ``metric_name('ndcg_cut_10')`` = ``'nDCG@10'``, ``metric_name('map')`` = ``'AP'``. Use it to
    query by the name you know: ``SELECT * FROM scores WHERE metric = metric_name('P.10')``. (Gains
    given equal to a qrels set's declared gains are stored without them; this function does not
    know the qrels set, so it keeps gains that are written.)

Migration 0004 converts the long names of older stores with ``evalstore_short_name`` and
``evalstore_resolved_params`` (the long name and the qrels set's declared gains).
"""

from __future__ import annotations

import json
import re

from ..base.python_udf import sql_function
from ..errors import MetricError
from . import registry
from .gains import stored_gains
from .names import resolved, short
from .options import EvalOptions
from .params import split_params


@sql_function("metric_name", ["VARCHAR"], "VARCHAR")
def metric_name(name: str) -> str:
    insts = registry.parse_metric(name)
    if len(insts) != 1:
        raise MetricError(f"{name!r} names {len(insts)} metrics; ask for one at a time")
    inst = insts[0]
    return short(inst.spec, dict(inst.params), inst.cutoff)


_LONG_RE = re.compile(r"^(?P<name>[^(@]+?)(?:\((?P<params>.*)\))?(?:@(?P<cutoff>\d+))?$")
_OPTIONS = ("convention", "complete", "depth")
_LEGACY = {"ERR": "ERR-ntcir", "nERR": "nERR-ntcir"}


def _from_long(long: str, default_gains: str | None) -> tuple[str, dict]:
    """The short name and the resolved parameters of a long canonical name (stores before v4)."""
    m = _LONG_RE.match(long)
    if not m:
        raise MetricError(f"cannot read the stored metric name {long!r}")
    items = split_params(m.group("params") or "")
    options: dict[str, object] = {}
    kept = []
    for item in items:
        k, _, v = item.partition("=")
        if k in _OPTIONS:
            options[k] = v if k == "convention" else (v == "true" if k == "complete" else int(v))
        elif not (k == "gains" and v == "grade"):
            kept.append(item)
    cutoff = f"@{m.group('cutoff')}" if m.group("cutoff") else ""
    # before version 8, ERR and nERR were NTCIREVAL's (migration 0008 renames them ERR-ntcir, nERR-ntcir)
    base = _LEGACY.get(m.group("name"), m.group("name"))
    text = base + (f"({','.join(kept)})" if kept else "") + cutoff
    inst = registry.parse_metric(text)[0]
    opts = EvalOptions(**options)  # type: ignore[arg-type]
    declared = stored_gains(default_gains)
    params = dict(inst.params)
    context_gains = params.get("gains") if params.get("gains") is not None else declared
    if inst.spec.param("gains") is None:
        context_gains = None
    name = short(inst.spec, params, inst.cutoff, opts.canonical_extra(), declared)
    return name, resolved(inst.spec, params, inst.cutoff, opts.as_dict(), context_gains)


@sql_function("evalstore_short_name", ["VARCHAR", "VARCHAR"], "VARCHAR", null_handling="special")
def short_name(long: str | None, default_gains: str | None) -> str | None:
    return None if long is None else _from_long(long, default_gains)[0]


@sql_function("evalstore_resolved_params", ["VARCHAR", "VARCHAR"], "VARCHAR", null_handling="special")
def resolved_params(long: str | None, default_gains: str | None) -> str | None:
    return None if long is None else json.dumps(_from_long(long, default_gains)[1], sort_keys=True)

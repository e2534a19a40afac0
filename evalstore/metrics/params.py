"""Metric parameters: their declarations and how a value written in a name becomes a checked value.

Every value is checked before any SQL is written: numbers must be finite (``nan``, ``inf`` and
``1e400`` are refused, except where a parameter allows infinity), integers are read as integers
(never through a float), values must lie in their declared range, and gains follow one rule
whether they come from a metric name (``gains=1:2:3``) or from a qrels set's declaration
(``ingest qrels --gains 1:2:3``): :func:`parse_gains`. Checked values become SQL literals with
:func:`evalstore.metrics.sqlfile.literal`; user text never reaches the SQL.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import MetricError

#: Largest cutoff or count accepted (DuckDB's INTEGER, which ranks are stored as).
MAX_INT = 2**31 - 1
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Param:
    """A metric parameter: name, kind, default, documentation and constraints.

    ``kind``: 'int', 'float', 'bool', 'gains' (gains of levels 1..n, non-negative and
    non-decreasing), 'floats' (a list of finite numbers) or 'str' (one of ``choices``).
    ``minimum`` / ``maximum`` bound numbers (and every element of a list); ``allow_inf`` lets a
    float (or list element) be ``inf``."""

    name: str
    kind: str
    default: Any
    doc: str = ""
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    allow_inf: bool = False


# The context parameters, shared by every metric that declares them.
REL = Param("rel", "int", 1, "relevance threshold: grade >= rel is relevant (trec_eval -l)", minimum=-MAX_INT)
JUDGED_ONLY = Param("judged_only", "bool", False, "condensed list: drop unjudged docs, renumber ranks (trec_eval -J)")
GAINS = Param(
    "gains",
    "gains",
    None,
    "gains of levels 1..n, e.g. 1:2:3 (default: gain = grade, or the qrels set's declared gains)",
)


def parse_int(text: str, what: str, minimum: float | None = None, maximum: float | None = None) -> int:
    """An integer written in decimal (``1_000``, ``0x10``, ``1.5`` and ``1e3`` are refused)."""
    t = text.strip()
    if not _INT_RE.fullmatch(t):
        raise MetricError(f"{what} must be an integer, not {text!r}")
    v = int(t)
    lo = -MAX_INT if minimum is None else minimum
    hi = MAX_INT if maximum is None else maximum
    if not lo <= v <= hi:
        raise MetricError(f"{what} must be an integer between {int(lo)} and {int(hi)}, not {text}")
    return v


_TRUE, _FALSE = ("true", "1", "yes", "t"), ("false", "0", "no", "f")


def parse_bool(text: str, what: str) -> bool:
    """The one rule of boolean parameters: true/yes/t/1 or false/no/f/0, in any case, quoted or
    not (``judged_only=true``, ``relative=True``, ``judged_only='true'``); anything else is an error."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        t = t[1:-1].strip()
    if t.lower() in _TRUE:
        return True
    if t.lower() in _FALSE:
        return False
    raise MetricError(f"{what} must be true or false (also yes/no, 1/0), not {text.strip()!r}")


def parse_float(
    text: str, what: str, minimum: float | None = None, maximum: float | None = None, allow_inf: bool = False
) -> float:
    """A finite decimal number (``inf`` only with ``allow_inf``; ``nan`` never)."""
    t = text.strip()
    if allow_inf and t.lower().lstrip("+") in ("inf", "infinity"):
        v = math.inf
    elif _FLOAT_RE.fullmatch(t):
        v = float(t)
        if not math.isfinite(v):
            raise MetricError(f"{what} must be a finite number, not {text!r} (too large)")
    else:
        raise MetricError(f"{what} must be a number, not {text!r}")
    if minimum is not None and v < minimum:
        raise MetricError(f"{what} must be at least {minimum:g}, not {text}")
    if maximum is not None and v > maximum:
        raise MetricError(f"{what} must be at most {maximum:g}, not {text}")
    return v


def parse_gain_map(text: str, what: str) -> tuple[float, ...]:
    """ir_measures' ``{grade: gain, ...}`` as gains of levels 1..n: grades the map leaves out keep
    their own value as gain (as ir_measures passes them to trec_eval), up to the highest grade it
    names. A gain for grade 0 or below (which would make unjudged-like docs count) is refused."""
    body = text.strip()[1:-1]
    mapping: dict[int, float] = {}
    for item in [x for x in body.split(",") if x.strip()]:
        k, sep, v = item.partition(":")
        if not sep:
            raise MetricError(f"{what}: write a gain map as {{grade:gain,...}}, e.g. {{1:1,2:3,3:7}}, not {text!r}")
        mapping[parse_int(k, f"{what}: a grade")] = parse_float(v, f"{what}: the gain of grade {k.strip()}")
    if not mapping:
        raise MetricError(f"{what}: the gain map {text!r} is empty")
    if any(g < 0 or (g == 0 and v != 0) for g, v in mapping.items()):
        raise MetricError(
            f"{what}: {text} gives a gain to grade 0 or below; evalstore's gains start at level 1 (grades <= 0 "
            "always have gain 0)"
        )
    top = max(mapping)
    return tuple(mapping.get(level, float(level)) for level in range(1, top + 1)) if top >= 1 else (0.0,)


def parse_floats(text: str, what: str, param: Param | None = None) -> tuple[float, ...]:
    """A list of numbers written ``1:2:3`` (or ``1,2,3``, ``[1,2,3]``), or for gains ir_measures'
    map ``{0:0,1:1,2:3}``."""
    if text.strip().startswith("{") and text.strip().endswith("}"):
        return parse_gain_map(text, what)
    body = text.strip().strip("[]()")
    parts = re.split(r"[:,]", body)
    if not body.strip() or any(not p.strip() for p in parts):
        raise MetricError(f"{what} must be a list of numbers such as 1:2:3 (no empty element), not {text!r}")
    kw: dict[str, Any] = {}
    if param is not None:
        kw = {"minimum": param.minimum, "maximum": param.maximum, "allow_inf": param.allow_inf}
    return tuple(parse_float(p, what, **kw) for p in parts)


def parse_gains(text: str | Any, what: str = "gains") -> tuple[float, ...]:
    """Gains of levels 1..n: finite, non-negative and non-decreasing from level 1 up (as NTCIREVAL
    requires). The rule of both ``gains=`` and ``ingest qrels --gains``."""
    if isinstance(text, str):
        vals = parse_floats(text, what)
    else:
        try:
            vals = tuple(parse_float(str(float(x)), what) for x in text)
        except (TypeError, ValueError):
            raise MetricError(f"{what} must be numbers, e.g. 1:2:3, not {text!r}") from None
    if not vals:
        raise MetricError(f"{what}: give one gain per relevance level 1..n, e.g. 1:2:3")
    if any(v < 0 for v in vals):
        raise MetricError(f"{what} must be non-negative, got {format_list(vals)}")
    if any(b < a for a, b in zip(vals, vals[1:])):
        raise MetricError(
            f"{what} must be non-decreasing from level 1 up (as NTCIREVAL requires), got {format_list(vals)}"
        )
    return vals


def format_list(vals: tuple[float, ...]) -> str:
    return ":".join(f"{v:g}" for v in vals)


def parse_value(param: Param, text: str, metric: str) -> Any:
    """The checked value of ``param`` written as ``text`` in the metric name ``metric``."""
    t = text.strip()
    what = f"{metric}: {param.name}"
    if param.kind == "int":
        return parse_int(t, what, param.minimum, param.maximum)
    if param.kind == "float":
        return parse_float(t, what, param.minimum, param.maximum, param.allow_inf)
    if param.kind == "bool":
        return parse_bool(t, what)
    if param.kind in ("gains", "floats"):
        if t.lower() in ("default", "none", ""):
            return None
        return parse_gains(t, what) if param.kind == "gains" else parse_floats(t, what, param)
    if param.kind == "str":
        value = t[1:-1] if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"" else t
        if param.choices and value not in param.choices:
            raise MetricError(f"{what} must be one of {', '.join(param.choices)}, not {t!r}")
        return value
    raise MetricError(f"{metric}: unsupported parameter kind {param.kind}")


def split_params(text: str) -> list[str]:
    """``a=1,b=[1,2],c={0:1,1:2}`` -> ``['a=1', 'b=[1,2]', 'c={0:1,1:2}']`` (commas inside
    brackets or braces do not split)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]

"""The metric registry: every metric's name, parameters, SQL and citation in one place.

A metric is declared once, in the family module of ``evalstore/metrics/families/`` that matches
its SQL file in ``sql/`` (one family per file). ``evalstore metrics`` (CLI) and
:func:`describe` list them. Names follow ir_measures' syntax::

    Name(param=value,...)@cutoff        e.g.  nDCG@10   P(rel=2)@10   Q-measure(beta=0.5)
                                              nDCG(gains=1:2:3,judged_only=true)@20

and trec_eval's names are accepted as aliases (``map``, ``P_10``, ``P.10``, ``ndcg_cut_10``, ...).
The canonical name stored with every score has all parameters sorted and defaults filled.

Context parameters, shared by every metric that declares them, change the ranked judged list
that the SQL works on rather than the formula:

* ``rel`` (int, default 1): a document is relevant when its grade >= rel (trec_eval ``-l``);
* ``judged_only`` (bool, default false): condensed list, unjudged documents removed and ranks
  renumbered (trec_eval ``-J``; Sakai's AP', Q', nDCG');
* ``gains`` (gains of levels 1..n, e.g. ``1:2:3``; default: gain = grade, or the qrels set's
  declared default gains).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MetricError
from .names import canonical, format_value
from .params import MAX_INT, parse_int, parse_value, split_params
from .ranked_list import Context
from .references import agreement
from .spec import MetricSpec

CONTEXT_PARAMS = ("rel", "judged_only", "gains")


@dataclass(frozen=True)
class MetricInstance:
    """A metric with its parameters bound, as requested by a user."""

    spec: MetricSpec
    params: tuple[tuple[str, Any], ...]  # sorted (name, value), defaults filled
    cutoff: int | None
    display: str  # the name as the user wrote it

    @property
    def p(self) -> dict[str, Any]:
        return dict(self.params)

    def canonical(self, extra: dict[str, Any] | None = None) -> str:
        """The name with every parameter (defaults filled) and ``extra`` options, sorted."""
        return canonical(self.spec.name, dict(self.params), self.cutoff, extra)

    def context(self) -> Context:
        """The part of the parameters that shapes the ranked judged list."""
        p = self.p
        rel = p.get("rel")
        return Context(1 if rel is None else rel, p.get("judged_only", False), p.get("gains"))

    @property
    def provider(self) -> str | None:
        """The provider ir_measures computes this instance with by default (None: not in ir_measures)."""
        prov = self.spec.provider
        return prov(self.p, self.cutoff) if callable(prov) else prov


_REGISTRY: dict[str, MetricSpec] = {}
_LOWER: dict[str, str] = {}
_ALIASES: list[tuple[re.Pattern, Callable[[re.Match], list[Any]]]] = []


def register(spec: MetricSpec) -> MetricSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"metric {spec.name!r} registered twice")
    _REGISTRY[spec.name] = spec
    for n in (spec.name, *spec.aliases):
        key = n.lower()
        if key in _LOWER and _LOWER[key] != spec.name:
            raise ValueError(f"metric name {n!r} is ambiguous ({_LOWER[key]} and {spec.name})")
        _LOWER[key] = spec.name
    return spec


def alias(pattern: str, expand: str | Callable[[re.Match], Any]) -> None:
    """Register a name pattern (full match) rewritten to one or more ir_measures-style names.

    ``expand`` is a template using ``\\1`` group references, or a function of the match returning
    names, or ``(name, display)`` pairs to choose the displayed name of each expanded item."""
    rx = re.compile(pattern)
    if isinstance(expand, str):
        template = expand
        _ALIASES.append((rx, lambda m: [m.expand(template)]))
    else:
        _ALIASES.append((rx, lambda m: (lambda r: [r] if isinstance(r, (str, tuple)) else list(r))(expand(m))))


#: measures of one's own (evalstore.metrics.user), by lower-case name: apart from the built-ins, so
#: that nothing a session registers changes what the built-in registry lists
_USER: dict[str, MetricSpec] = {}


def all_metrics() -> list[MetricSpec]:
    """The built-in metrics (measures of one's own: :func:`user_metrics`)."""
    return sorted(_REGISTRY.values(), key=lambda s: (s.family, s.name))


def user_metrics() -> list[MetricSpec]:
    """The measures of one's own known to this process, by name."""
    return sorted(_USER.values(), key=lambda s: s.name.lower())


def register_user(spec: MetricSpec) -> MetricSpec:
    """Register a measure of one's own (``spec.user`` set), replacing one of the same name; a
    built-in name is refused."""
    if spec.user is None:
        raise ValueError("register_user takes a measure of one's own")
    if spec.name.lower() in _LOWER:
        raise MetricError(
            f"{spec.name!r} is the name of a built-in metric ({_LOWER[spec.name.lower()]}); choose another"
        )
    if any(rx.fullmatch(spec.name) for rx, _ in _ALIASES):
        shown = ", ".join(i.display for i in parse_metric(spec.name))
        raise MetricError(f"{spec.name!r} is a trec_eval name of built-in metrics ({shown}); choose another")
    _USER[spec.name.lower()] = spec
    return spec


def unregister_user(name: str) -> None:
    _USER.pop(name.lower(), None)


def get(name: str) -> MetricSpec:
    key = _LOWER.get(name.lower())
    if key is None:
        user = _USER.get(name.lower())
        if user is not None:
            return user
        raise MetricError(
            f"unknown metric {name!r}; `evalstore metrics` lists the metrics and their parameters" + _suggest(name)
        )
    return _REGISTRY[key]


def _suggest(name: str) -> str:
    names = {**{k: v for k, v in _LOWER.items()}, **{k: s.name for k, s in _USER.items()}}
    close = difflib.get_close_matches(name.lower(), list(names), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(names[c] for c in close)}?)" if close else ""


_NAME_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9_+\-\.]+?)\s*(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<cutoff>[0-9.]+))?\s*$"
)


def parse_metric(text: str) -> list[MetricInstance]:
    """Parse a metric name (ir_measures syntax or a trec_eval alias) into instances.

    A trec_eval name with several cutoffs (``P.5,10``) gives several instances."""
    raw = text.strip()
    for rx, expand in _ALIASES:
        m = rx.fullmatch(raw)
        if m:
            names = expand(m)
            out = []
            for n in names:
                # an expansion item may be (name, display), e.g. ('P@5', 'P_5') for trec_eval's P.5,10
                n, disp = n if isinstance(n, tuple) else (n, raw if len(names) == 1 else n)
                out.append(_parse_one(n, display=disp))
            return out
    return [_parse_one(raw, display=raw)]


def _parse_one(text: str, display: str | None) -> MetricInstance:
    m = _NAME_RE.match(text)
    # parameters may contain ':' and '.' (gains) but not ')' so the regex above is enough,
    # except that names like 'P+' or 'Q-measure' need the lazy name group.
    if not m:
        raise MetricError(f"cannot read metric name {text!r}; write Name, Name@k or Name(param=value,...)@k")
    spec = get(m.group("name"))
    values: dict[str, Any] = {}
    if m.group("params"):
        # gains=1:2:3 must not be split on ',' inside the value list: we only use ':' for lists.
        for item in split_params(m.group("params")):
            if "=" not in item:
                raise MetricError(f"{text}: parameter {item!r} should be name=value")
            k, v = (s.strip() for s in item.split("=", 1))
            if k in values:
                raise MetricError(f"{text}: parameter {k} is given twice")
            param = spec.param(k)
            if param is None:
                allowed = ", ".join(p.name for p in spec.params) or "none"
                raise MetricError(f"{text}: {spec.name} has no parameter {k!r} (parameters: {allowed})")
            values[k] = parse_value(param, v, text)
    for p in spec.params:
        values.setdefault(p.name, p.default)
    cutoff = None
    if m.group("cutoff") is not None:
        if spec.cutoff == "none":
            raise MetricError(f"{text}: {spec.name} takes no @cutoff")
        cutoff = parse_int(m.group("cutoff"), f"{text}: the cutoff", 1, MAX_INT)
    elif spec.cutoff == "required":
        raise MetricError(f"{text}: {spec.name} needs a cutoff, e.g. {spec.name}@10")
    if spec.check:
        spec.check(values)
    inst = MetricInstance(spec, tuple(sorted(values.items())), cutoff, display or "")
    if not display:
        inst = MetricInstance(spec, inst.params, cutoff, inst.canonical())
    return inst


def _spec_of(name: str) -> MetricSpec:
    """The metric a name denotes, in any spelling: ``nDCG``, ``ndcg_cut_10``, ``nDCG(gains=1:2)@5``."""
    try:
        return get(name)
    except MetricError:
        specs = list(dict.fromkeys(i.spec for i in parse_metric(name)))
        if len(specs) != 1:
            raise MetricError(f"{name!r} names several metrics ({', '.join(s.name for s in specs)})") from None
        return specs[0]


def spark_support(spec: MetricSpec) -> str | None:
    """None when the metric runs on the Spark backend (evalstore.spark), else why not."""
    if spec.user is not None and spec.user.language == "python":
        return "a measure of one's own computed by a Python function"
    if spec.kind != "judgments":
        return f"evaluates generated answers ({spec.kind}), which the Parquet layout does not carry"
    if spec.block.udfs:
        return f"calls Python functions ({', '.join(sorted(spec.block.udfs))})"
    if "rl_subtopics" in spec.block.reads:
        return "reads subtopic judgments (rl_subtopics), which the Parquet layout does not carry yet"
    code = spec.block.code()
    if _ordered_aggregate(code):
        return "sums in rank order (sum(... ORDER BY ...)), which Spark SQL cannot express"
    if re.search(r"\blen\(", code):
        return "takes the length of lists (len), which does not translate to Spark SQL yet"
    return None


_AGGREGATES = ("sum", "avg", "min", "max", "count", "string_agg", "list", "arg_min", "arg_max")


def _ordered_aggregate(code: str) -> bool:
    """Whether an aggregate call of the SQL has its own ORDER BY (``sum(x ORDER BY rank)``), as
    opposed to the ORDER BY of a window (``OVER (... ORDER BY ...)``)."""
    opened: list[int] = []  # positions of the open parentheses
    for i, ch in enumerate(code):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            opened.pop()
        elif opened and code[i : i + 5].upper() == "ORDER" and re.match(r"ORDER\s+BY\b", code[i:], re.I):
            before = re.search(r"(\w+)\s*$", code[: opened[-1]])
            if before and before.group(1).lower() in _AGGREGATES:
                return True
    return False


def describe(name: str | None = None) -> list[dict[str, Any]]:
    """Registry entries as dicts (name, aliases, parameters, SQL location and what the SQL reads,
    needs and calls, citation, doc)."""
    specs = [_spec_of(name)] if name else all_metrics()
    return [
        {
            "name": s.name,
            "aliases": list(s.aliases),
            "cutoff": s.cutoff,
            "params": [
                {"name": p.name, "kind": p.kind, "default": format_value(p.default), "doc": p.doc} for p in s.params
            ],
            "aggregate": s.aggregate,
            "sql": s.sql if s.user is not None else "sql/" + s.sql.replace("#", " -- @metric "),
            "reads": sorted(s.block.reads),
            "needs": sorted(s.block.needs),
            "udfs": sorted(s.block.udfs),
            "citation": s.citation,
            "reference": "its definition" if s.user is not None else agreement(s.reference),
            "ir_measures": s.provider if isinstance(s.provider, str) else ("by parameters" if s.provider else "no"),
            "spark": spark_support(s) or "yes",
            "explain": "yes" if s.block.explain else "no",
            "doc": s.doc,
        }
        for s in specs
    ]

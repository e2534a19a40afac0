"""A fusion's recipe: which runs, which method and normalisation with which parameters; checked
once (:func:`make`), described for people (:meth:`Recipe.description`) and stored with the fused
run (:meth:`Recipe.to_dict`, the ``fusion`` column of ``runs``; :meth:`Recipe.ir_metadata`, the
run's ir_metadata header)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import FusionError
from ..version import __version__
from .registry import METHODS, RANKS, Method, Normalization, method, normalization

RANK_SOURCES = ("evaluation", "submitted")


@dataclass(frozen=True)
class Recipe:
    """What to fuse and how. ``params``: every parameter of the method (defaults filled; a
    parameter ``--optimize`` searches is absent until chosen); ``weights``: one per run (weighted
    methods); ``depth``: the top documents of each run considered; ``top``: documents kept per topic;
    ``ranks``: ``evaluation`` (evalstore's order: score descending, docno descending) or
    ``submitted`` (the rank column as written, as Pyserini and Anserini read it)."""

    runs: tuple[str, ...]
    method: Method
    norm: Normalization
    params: dict[str, float] = field(default_factory=dict)
    weights: tuple[float, ...] | None = None
    depth: int | None = None
    top: int | None = None
    ranks: str = "evaluation"

    def with_choice(self, params: Mapping[str, float], weights: Sequence[float] | None) -> Recipe:
        """The recipe with searched parameters or weights filled in."""
        return replace(self, params={**self.params, **params}, weights=tuple(weights) if weights else self.weights)

    # ------------------------------------------------------------------ describing
    def method_text(self) -> str:
        """``RRF (k = 60)``, ``weighted sum (weights 0.5, 0.5) of min-max normalised scores``."""
        parts = [f"{p} = {_num(v)}" for p, v in self.params.items()]
        if self.weights is not None:
            parts.append("weights " + ", ".join(_num(w) for w in self.weights))
        text = self.method.title + (f" ({'; '.join(parts)})" if parts else "")
        if self.norm.name != "none":
            text += f" of {self.norm.title} scores"
        return text

    def description(self) -> str:
        """``fused from A, B, C by RRF (k = 60)`` and the options that were not the defaults."""
        text = f"fused from {', '.join(self.runs)} by {self.method_text()}"
        extra = []
        if self.depth is not None:
            extra.append(f"top {self.depth} of each run")
        if self.ranks == "submitted":
            extra.append("ranks as written in the files")
        if self.top is not None:
            extra.append(f"{self.top} documents per topic kept")
        return text + (f" ({'; '.join(extra)})" if extra else "")

    def to_dict(self, inputs: Sequence[Mapping[str, Any]], optimized: Mapping[str, Any] | None = None) -> dict:
        """The recipe as stored (``runs.fusion``): ``inputs`` are ``{run, sha256}`` in order."""
        return {
            "method": self.method.name,
            "norm": self.norm.name,
            "params": dict(self.params),
            "weights": list(self.weights) if self.weights is not None else None,
            "depth": self.depth,
            "top": self.top,
            "ranks": self.ranks,
            "inputs": [
                {**dict(i), "weight": self.weights[k] if self.weights is not None else None}
                for k, i in enumerate(inputs)
            ],
            "optimized": dict(optimized) if optimized else None,
            "evalstore_version": __version__,
        }

    def ir_metadata(self, tag: str, inputs: Sequence[Mapping[str, Any]], optimized: Mapping | None) -> dict:
        """The ir_metadata of the fused run (the schema's method.retrieval steps: the input runs, then
        the fusion that fuses them)."""
        step: dict[str, Any] = {
            "name": self.method.name,
            "method": f"evalstore fuse --method {self.method.name}",
            "description": self.description(),
            "normalization": self.norm.name,
            **{k: v for k, v in self.params.items()},
        }
        if self.weights is not None:
            step["weights"] = list(self.weights)
        for key, value in (("depth", self.depth), ("top", self.top)):
            if value is not None:
                step[key] = value
        step["ranks"] = self.ranks
        step["fuses"] = [i["run"] for i in inputs]
        if optimized:
            step["optimized"] = dict(optimized)
        return {
            "schema-version": 0.1,
            "tag": tag,
            "method": {
                "automatic": True,
                "retrieval": [{"name": i["run"], "run": i["run"], "sha256": i["sha256"]} for i in inputs] + [step],
            },
            "implementation": {
                "source": {"lang": ["Python", "SQL"], "repository": "evalstore", "version": __version__}
            },
        }


def plain(v: float) -> float:
    """A whole number as an int (``k: 60`` rather than ``k: 60.0`` in the header and the JSON)."""
    v = float(v)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def parse_params(items: Sequence[str] | Mapping[str, Any] | None) -> dict[str, float]:
    """``["k=60", "phi=0.8"]`` (the command line's ``--param``) or a mapping, as numbers."""
    if not items:
        return {}
    pairs = items.items() if isinstance(items, Mapping) else [_split(s) for s in items]
    out: dict[str, float] = {}
    for k, v in pairs:
        try:
            out[str(k)] = float(v)
        except (TypeError, ValueError):
            raise FusionError(f"the parameter {k} = {v!r} is not a number") from None
    return out


def _split(item: str) -> tuple[str, str]:
    name, eq, value = str(item).partition("=")
    if not eq or not name.strip():
        raise FusionError(f"a parameter is NAME=VALUE, e.g. k=60, not {item!r}")
    return name.strip(), value.strip()


def parse_weights(weights: str | Sequence[float] | None) -> tuple[float, ...] | None:
    """``"0.5,0.3,0.2"`` or a sequence of numbers."""
    if weights is None:
        return None
    items = [w for w in weights.split(",")] if isinstance(weights, str) else list(weights)
    try:
        return tuple(float(w) for w in items)
    except (TypeError, ValueError):
        raise FusionError(f"weights are numbers separated by commas, e.g. 0.5,0.3,0.2, not {weights!r}") from None


def make(
    runs: Sequence[str],
    method_name: str,
    *,
    norm: str | None = None,
    params: Sequence[str] | Mapping[str, Any] | None = None,
    weights: str | Sequence[float] | None = None,
    depth: int | None = None,
    top: int | None = None,
    ranks: str = "evaluation",
    searching: bool = False,
) -> Recipe:
    """A checked recipe (every problem a :class:`FusionError` before any work). ``searching``: the
    weights or a parameter are to be chosen by ``--optimize``, so they may be missing."""
    names = tuple(runs) if not isinstance(runs, str) else (runs,)
    if len(names) < 2:
        raise FusionError("fusion needs at least two runs (-r A -r B)")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise FusionError(f"the run {twice[0]!r} is given twice; each input run once (weights weigh them)")
    m = method(method_name)
    n = _norm_for(m, norm)
    values = _params(m, parse_params(params), searching)
    w = _weights(m, parse_weights(weights), len(names), searching)
    check_cuts(depth, top, ranks)
    return Recipe(
        names, m, n, values, w, None if depth is None else int(depth), None if top is None else int(top), ranks
    )


def check_cuts(depth: int | None, top: int | None, ranks: str) -> None:
    """``depth`` and ``top`` are numbers of documents; ``ranks`` one of :data:`RANK_SOURCES`."""
    for label, v in (("depth", depth), ("top", top)):
        if v is not None and (int(v) != v or v < 1):
            raise FusionError(f"{label} is a number of documents (1 or more), not {v}")
    if ranks not in RANK_SOURCES:
        raise FusionError(f"ranks is one of {', '.join(RANK_SOURCES)}, not {ranks!r}")


def _norm_for(m: Method, norm: str | None) -> Normalization:
    """The normalisation of a method: ranx's default (min-max) for methods of scores, none for methods
    of ranks, which normalisation cannot change (and ranx's borda normalisation would scramble)."""
    if m.reads == RANKS:
        n = normalization(norm)
        if n.name != "none":
            raise FusionError(
                f"{m.name} fuses ranks: a normalisation does not change it (leave --norm out); ranx applies "
                f"it anyway, and after borda the order of the candidates is the order of a Python set"
            )
        return n
    return normalization("min-max" if norm is None else norm)


def _params(m: Method, given: Mapping[str, float], searching: bool) -> dict[str, float]:
    unknown = [k for k in given if m.param(k) is None]
    if unknown:
        known = ", ".join(p.name for p in m.params) or "none"
        raise FusionError(f"{m.name} has no parameter {unknown[0]!r} (its parameters: {known})")
    out: dict[str, float] = {}
    for p in m.params:
        if p.name in given:
            out[p.name] = plain(p.check(given[p.name], m.name))
        elif p.default is not None:
            if not (searching and p.grid):
                out[p.name] = plain(p.default)
        elif not (searching and p.grid):
            raise FusionError(
                f"{m.name} needs --param {p.name}=VALUE ({p.help}; {p.range_text()}), or --optimize METRIC to choose it"
            )
    return out


def _weights(m: Method, w: tuple[float, ...] | None, n_runs: int, searching: bool) -> tuple[float, ...] | None:
    if not m.weighted:
        if w is not None:
            weighted = ", ".join(x.name for x in _weighted())
            raise FusionError(f"{m.name} takes no weights; the weighted methods are {weighted}")
        return None
    if w is None:
        if searching:
            return None
        raise FusionError(
            f"{m.name} needs --weights, one per run ({n_runs}, e.g. {','.join(['0.5'] * n_runs)}), or --optimize METRIC"
        )
    if len(w) != n_runs:
        raise FusionError(f"{len(w)} weights for {n_runs} runs; give one weight per run, in the order of -r")
    if any(not math.isfinite(x) or x < 0 for x in w) or not any(w):
        raise FusionError(f"weights are numbers >= 0, not all 0: {', '.join(map(str, w))}")
    return w


def _weighted() -> list[Method]:

    return [x for x in METHODS.values() if x.weighted]

"""The fusion methods and score normalisations: one declarative entry each.

An entry is a name (ranx's), its aliases, a title for people ("RRF", "CombMNZ"), its parameters
(defaults, ranges, the grid ``--optimize`` searches) and its SQL, which ``sql/fusion.sql`` places
(:mod:`evalstore.fusion.compute`). The command line's choices and help come from here.

The SQL of a **normalisation** is an expression of one run's document on one topic, over
``score``, ``p`` (its position in the run: evaluation rank, or the rank as written), ``n`` (the
run's documents on the topic), ``c`` (the candidates: the documents of any input run on the
topic), and the run's ``s_min``, ``s_max``, ``s_sum``, ``s_mean``, ``s_sd`` (population) on the
topic; ``missing`` is the value of a candidate the run lacks (borda), else it stays missing.

The SQL of a **method** is ``value``, one run's contribution for a document (over ``${s}``, the
normalised score, ``${p}``, ``${n}``, ``c`` and the parameters as ``${name}``), ``missing``, the
contribution of a candidate the run lacks (bordafuse), and ``combine``, the combination of the
runs' contributions, with ``${sum}`` (their sum in the order of the runs, as ranx adds them),
``${wsum}`` (of weight x contribution), ``${sum_w}`` (of the weights of the runs that have the
document), ``${count}`` (how many have it), ``${max}``, ``${min}``, ``${median}`` and the
parameters as ``${name}`` (evalstore/fusion/compute.py renders them for every run).

The definitions are ranx's (ranx 0.3, ``ranx.fusion`` and ``ranx.normalization``; reproduced by
tests/fusion/test_ranx_fixtures.py and compared with ranx's ``fuse`` on TREC DL 2019 by
tests/fusion/test_ranx_dl19.py). ranx's definition of a document missing from a run is kept: a
score method adds nothing for it (CombSUM, weighted sum) or counts only the runs that have it
(CombMNZ, CombANZ, CombMED, ...), except after the borda normalisation, which gives it a value in
every run. CombMAX and CombMIN count a missing document as ranx does, as -1e9 and 1e9: it only
matters for scores beyond those bounds (raw scores, or the max normalisation of a run whose scores
are all negative, which divides by ranx's floor of 1e-9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import FusionError

SCORES, RANKS = "scores", "ranks"


@dataclass(frozen=True)
class Param:
    """A method's parameter: default (None: required), range, and the grid ``--optimize`` searches
    (``(first, last, step)``, ranx's ``optimize_fusion`` defaults)."""

    name: str
    help: str
    default: float | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    grid: tuple[float, float, float] | None = None

    def range_text(self) -> str:
        lo = "" if self.low is None else f"{_num(self.low)} {'<' if self.low_open else '<='} "
        hi = "" if self.high is None else f" {'<' if self.high_open else '<='} {_num(self.high)}"
        return f"{lo}{self.name}{hi}" if lo or hi else f"{self.name} any number"

    def check(self, value: float, method: str) -> float:
        v = float(value)
        bad = v != v or v in (float("inf"), float("-inf"))
        if self.low is not None:
            bad = bad or (v <= self.low if self.low_open else v < self.low)
        if self.high is not None:
            bad = bad or (v >= self.high if self.high_open else v > self.high)
        if bad:
            raise FusionError(f"{method}: {self.name} = {_num(v)} is out of range ({self.range_text()})")
        return v


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True)
class Normalization:
    name: str
    aliases: tuple[str, ...]
    title: str
    help: str
    expr: str
    missing: str = "NULL"
    needs_scores: bool = True
    reference: str = "ranx.normalization"


@dataclass(frozen=True)
class Method:
    name: str
    aliases: tuple[str, ...]
    title: str
    help: str
    reads: str  # SCORES (the normalised scores) or RANKS (positions; no normalisation)
    value: str
    combine: str
    missing: str = "NULL"
    params: tuple[Param, ...] = ()
    weighted: bool = False
    reference: str = ""

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def optimisable(self) -> bool:
        return self.weighted or any(p.grid for p in self.params)


_NORMS = (
    Normalization("none", ("None", "no"), "raw", "the scores as they are", "score", needs_scores=True),
    Normalization(
        "min-max", ("min_max", "minmax"), "min-max normalised",
        "(score - min) / (max - min) per run and topic (denominator at least 1e-9)",
        "(score - s_min) / greatest(s_max - s_min, 1e-9)",
    ),
    Normalization(
        "min-max-inverted", ("min_max_inverted",), "inverted min-max normalised",
        "(max - score) / (max - min): for distances, where lower is better",
        "(s_max - score) / greatest(s_max - s_min, 1e-9)",
    ),
    Normalization("max", (), "max normalised", "score / max per run and topic", "score / greatest(s_max, 1e-9)"),
    Normalization(
        "sum", (), "sum normalised", "(score - min) / (sum - min * n) per run and topic",
        "(score - s_min) / greatest(s_sum - s_min * n, 1e-9)",
    ),
    Normalization(
        "zmuv", ("z-score", "zscore"), "z-scored", "(score - mean) / standard deviation (population) per run and topic",
        "(score - s_mean) / greatest(s_sd, 1e-9)",
    ),
    Normalization(
        "rank", (), "rank normalised", "1 - (position - 1) / n: the run's order only", "1 - (p - 1) / n",
        needs_scores=False,
    ),
    Normalization(
        "borda", (), "borda normalised",
        "1 - (position - 1) / candidates; a candidate the run lacks: 0.5 - (n - 1) / (2 candidates)",
        "1 - (p - 1) / c", missing="0.5 - (n - 1) / (2 * c)", needs_scores=False,
    ),
)  # fmt: skip

_K = Param("k", "the rank offset of RRF", 60, low=0, grid=(10, 100, 10))
_PHI = Param("phi", "the persistence of RBC: the weight of a rank is (1 - phi) phi^(rank - 1)", None,
             low=0, high=1, low_open=True, high_open=True, grid=(0.01, 0.99, 0.01))  # fmt: skip
_GAMMA = Param("gamma", "the exponent of the number of runs that have the document", None, low=0, grid=(0.01, 1, 0.01))
_SIGMA = Param("sigma", "added to the number of runs before its logarithm", 0.01, low=0, high=1, grid=(0.01, 1, 0.01))
_FOX = "Fox and Shaw, TREC-2 1993"

_METHODS = (
    Method("sum", ("combsum", "comb_sum", "CombSUM"), "CombSUM", "the sum of the normalised scores", SCORES,
           "${s}", "${sum}", reference=_FOX),
    Method("mnz", ("combmnz", "comb_mnz", "CombMNZ"), "CombMNZ",
           "the sum of the normalised scores times the number of runs that have the document", SCORES,
           "${s}", "${sum} * ${count}", reference=_FOX),
    Method("anz", ("combanz", "comb_anz", "CombANZ"), "CombANZ",
           "the sum of the normalised scores over the number of runs that have the document", SCORES,
           "${s}", "${sum} / ${count}", reference=_FOX),
    Method("max", ("combmax", "comb_max", "CombMAX"), "CombMAX",
           "the largest normalised score (a run without the document: -1e9, as ranx)", SCORES,
           "${s}", "${max}", missing="-1e9", reference=_FOX),
    Method("min", ("combmin", "comb_min", "CombMIN"), "CombMIN",
           "the smallest normalised score (a run without the document: 1e9, as ranx)", SCORES,
           "${s}", "${min}", missing="1e9", reference=_FOX),
    Method("med", ("combmed", "comb_med", "CombMED"), "CombMED",
           "the median normalised score of the runs that have the document", SCORES, "${s}", "${median}",
           reference=_FOX),
    Method("gmnz", ("combgmnz", "comb_gmnz", "CombGMNZ"), "CombGMNZ",
           "the sum of the normalised scores times (runs that have the document)^gamma", SCORES,
           "${s}", "${sum} * pow(${count}, ${gamma})", params=(_GAMMA,), reference="Joon Ho Lee, SIGIR 1997"),
    Method("wsum", ("weighted_sum", "combsum_weighted"), "weighted sum", "the weighted sum of the normalised scores",
           SCORES, "${s}", "${wsum}", weighted=True, reference="Bartell, Cottrell and Belew, SIGIR 1994"),
    Method("wmnz", ("weighted_mnz",), "WMNZ",
           "the sum of the normalised scores times the sum of the weights of the runs that have the document",
           SCORES, "${s}", "${sum} * ${sum_w}", weighted=True, reference="Wu, Crestani and Bi, ECIR 2006"),
    Method("mixed", (), "Mixed", "the weighted sum of the normalised scores times sqrt(runs that have the document)",
           SCORES, "${s}", "${wsum} * sqrt(${count})", weighted=True, reference="Wu, Crestani and Bi, ECIR 2006"),
    Method("rrf", ("reciprocal_rank_fusion", "RRF"), "RRF", "the sum of 1 / (k + rank)", RANKS,
           "1.0 / (${k} + ${p})", "${sum}", params=(_K,), reference="Cormack, Clarke and Buettcher, SIGIR 2009"),
    Method("isr", ("ISR",), "ISR", "the sum of 1 / rank^2 times the number of runs that have the document", RANKS,
           "1.0 / (${p} * ${p})", "${sum} * ${count}", reference="Mourao, Martins and Magalhaes, CIKM 2014"),
    Method("log_isr", ("logisr", "log-isr"), "log ISR",
           "the sum of 1 / rank^2 times ln(number of runs that have the document)", RANKS,
           "1.0 / (${p} * ${p})", "${sum} * ln(${count})", reference="Mourao, Martins and Magalhaes, CIKM 2014"),
    Method("logn_isr", ("logn-isr",), "logN ISR",
           "the sum of 1 / rank^2 times ln(number of runs that have the document + sigma)", RANKS,
           "1.0 / (${p} * ${p})", "${sum} * ln(${count} + ${sigma})", params=(_SIGMA,),
           reference="Mourao, Martins and Magalhaes, CIKM 2014"),
    Method("bordafuse", ("borda_fuse", "borda-fuse", "BordaFuse"), "BordaFuse",
           "the sum of Borda points: candidates - rank + 1; a candidate the run lacks: (candidates - n + 1) / 2",
           RANKS, "c - (${p} - 1)", "${sum}", missing="(c - ${n} + 1) / 2", reference="Aslam and Montague, SIGIR 2001"),
    Method("w_bordafuse", ("weighted_bordafuse", "w-bordafuse"), "weighted BordaFuse",
           "the weighted sum of Borda points", RANKS, "c - (${p} - 1)", "${wsum}", missing="(c - ${n} + 1) / 2",
           weighted=True, reference="Aslam and Montague, SIGIR 2001"),
    Method("rbc", ("RBC", "rank_biased_centroid"), "RBC", "the sum of (1 - phi) phi^(rank - 1)", RANKS,
           "(1 - ${phi}) * pow(${phi}, ${p} - 1)", "${sum}", params=(_PHI,),
           reference="Bailey, Moffat, Scholer and Thomas, SIGIR 2017"),
)  # fmt: skip

METHODS: dict[str, Method] = {m.name: m for m in _METHODS}
NORMALIZATIONS: dict[str, Normalization] = {n.name: n for n in _NORMS}
METHOD_ALIASES: dict[str, str] = {a: m.name for m in _METHODS for a in m.aliases}
NORM_ALIASES: dict[str, str] = {a: n.name for n in _NORMS for a in n.aliases}


def method(name: str) -> Method:
    """The method called ``name`` (ranx's name, an alias, any case)."""
    return _lookup(name, METHODS, METHOD_ALIASES, "fusion method")


def normalization(name: str | None) -> Normalization:
    """The normalisation called ``name`` (None: none)."""
    return _lookup("none" if name is None else name, NORMALIZATIONS, NORM_ALIASES, "normalisation")


def _lookup(name: str, entries: Mapping, aliases: Mapping[str, str], what: str):
    key = aliases.get(name, name)
    if key not in entries:
        folded = {k.lower(): k for k in [*entries, *aliases]}
        key = aliases.get(folded.get(name.lower(), ""), folded.get(name.lower(), ""))
    if key not in entries:
        raise FusionError(f"unknown {what} {name!r}; one of {', '.join(entries)}")
    return entries[key]


def methods_help() -> str:
    """One line per method for ``--help``."""
    out = []
    for m in METHODS.values():
        ps = ", ".join(f"{p.name}={_num(p.default)}" if p.default is not None else p.name for p in m.params)
        extra = f" ({ps})" if ps else ""
        extra += " [--weights]" if m.weighted else ""
        out.append(f"{m.name}{extra}: {m.help}")
    return "; ".join(out)


def norms_help() -> str:
    return "; ".join(f"{n.name}: {n.help}" for n in NORMALIZATIONS.values())

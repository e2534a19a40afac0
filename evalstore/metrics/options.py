"""Evaluation options: what applies to every metric of one evaluation.

* ``convention``: ``'trec_eval'`` (default), ``'trec_eval9'``, ``'ntcireval'`` or ``'ir_measures'``.
  ``trec_eval9`` is ``trec_eval`` with the scores compared in single precision, as trec_eval up to
  9.0.8 and pytrec_eval read them (``float sim``): scores that differ only beyond float32's 7
  significant digits tie and are ordered by docno. NIST's official TREC scores of those years were
  computed that way; use it to reproduce them exactly (every DL 2019/2020 official value does).
  ``ir_measures`` gives ir_measures 0.4.3's numbers: each metric is computed with the conventions
  of the provider ir_measures uses for it by default (:mod:`.references`: its order of tied scores,
  gdeval's 5 decimals), and topics of the qrels missing from a run score 0 (``complete`` implied,
  as ir_measures pads them).

  ============================  =================================  ==================================
  what                          trec_eval                          ntcireval
  ============================  =================================  ==================================
  order of a run's documents    score desc, ties docno desc        file order (res files, TREC lines)
  topics with no relevant doc   scored 0 and averaged in           dropped (NTCIREVAL prints nothing)
  truncation                    none (``depth=``, trec_eval -M)     top 1000 (``depth=``, -truncate)
  ERR's g_max                   top declared gain (same)           top declared gain
  ============================  =================================  ==================================

* ``complete`` (trec_eval ``-c``): topics of the qrels missing from a run score 0 and enter the
  mean. Default False: only topics both in the qrels and in the run are evaluated (trec_eval 9,
  pytrec_eval; trec_eval 10 refuses such runs without -c).
* ``depth``: evaluate only the top ``depth`` documents of each topic (trec_eval ``-M``).

They travel as one value, :class:`EvalOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import MetricError

CONVENTIONS = ("trec_eval", "trec_eval9", "ntcireval", "ir_measures")
#: The order of a run's documents under each convention (ir_measures: per metric, its provider's).
CONVENTION_ORDER = {"trec_eval": "trec_eval", "trec_eval9": "float32", "ntcireval": "file", "ir_measures": "trec_eval"}
NTCIREVAL_DEFAULT_DEPTH = 1000
#: "No truncation": larger than any rank.
NO_DEPTH = 2_000_000_000


@dataclass(frozen=True)
class EvalOptions:
    """The options of one evaluation, with their defaults (the one place they are declared): checked
    when made (MetricError for an unknown convention or a depth below 1); ``ir_measures`` implies
    ``complete``. Passed down as one value; the public edges (``Store`` methods,
    :func:`evalstore.evaluate`) take them as keywords (:func:`options_of`)."""

    convention: str = "trec_eval"
    complete: bool = False
    depth: int | None = None
    pool: bool = True  # subsamples: the parent's dropped docs are "pooled, unjudged"
    #: the parts of a run read in pieces: never padded, whatever the convention (:meth:`unpadded`);
    #: a field, so that ``replace`` (``with_pool``) keeps it
    _part: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.convention not in CONVENTIONS:
            raise MetricError(f"unknown convention {self.convention!r}; use one of {', '.join(CONVENTIONS)}")
        if self.depth is not None and self.depth < 1:
            raise MetricError(f"depth must be a positive number of documents, not {self.depth}")
        # ir_measures scores a qrels topic missing from the run as 0
        padded = (bool(self.complete) or self.convention == "ir_measures") and not self._part
        object.__setattr__(self, "complete", padded)

    @property
    def depth_value(self) -> int:
        if self.depth is not None:
            return self.depth
        return NTCIREVAL_DEFAULT_DEPTH if self.convention == "ntcireval" else NO_DEPTH

    def canonical_extra(self) -> dict[str, Any]:
        """Options that change values, appended to the canonical metric name when not default."""
        extra: dict[str, Any] = {}
        if self.convention != "trec_eval":
            extra["convention"] = self.convention
        if self.complete and self.convention != "ir_measures":
            extra["complete"] = True
        if self.depth is not None:
            extra["depth"] = self.depth
        return extra

    def as_dict(self) -> dict[str, Any]:
        """The options that change values, every one with its value (stored with each score)."""
        return {"convention": self.convention, "complete": self.complete, "depth": self.depth}

    def with_pool(self, pool: bool) -> EvalOptions:
        return replace(self, pool=pool)

    def unpadded(self) -> EvalOptions:
        """These options without the padding of the topics a run lacks, even under ``ir_measures``
        (the parts of a run read in pieces: the run is padded once, when it is read whole)."""
        return replace(self, complete=False, _part=True)


#: The options' defaults, as the public edges' keywords show them (``convention=DEFAULTS.convention``).
DEFAULTS = EvalOptions()
#: The evaluation keywords of the public edges: :class:`EvalOptions`' fields.
KEYWORDS = tuple(f.name for f in fields(EvalOptions) if not f.name.startswith("_"))


def options_from(options: EvalOptions | None = None, **keywords: Any) -> EvalOptions:
    """The :class:`EvalOptions` of a public call: ``options`` when given as a value (its keywords
    then left at their defaults), else the keywords (``convention=``, ``complete=``, ``depth=``,
    ``pool=``; MetricError for another one)."""
    unknown = sorted(set(keywords) - set(KEYWORDS))
    if unknown:
        raise MetricError(f"unknown evaluation option {unknown[0]!r}; the options are {', '.join(KEYWORDS)}")
    if options is None:
        return EvalOptions(**keywords)
    if not isinstance(options, EvalOptions):
        raise MetricError(f"options= is an EvalOptions value, not {type(options).__name__}")
    given = [k for k, v in keywords.items() if v != getattr(DEFAULTS, k)]
    if given:
        raise MetricError(f"give the evaluation options as options= or as keywords ({', '.join(given)}), not both")
    return options


def options_of(kwargs: dict[str, Any]) -> EvalOptions:
    """:func:`options_from` of the keywords (and ``options=``) popped from a call's ``kwargs``."""
    return options_from(kwargs.pop("options", None), **{k: kwargs.pop(k) for k in KEYWORDS if k in kwargs})

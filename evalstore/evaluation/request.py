"""What an evaluation is asked: a source, a request, and which of their options go together.

:func:`evalstore.api.evaluate_source` takes every evaluation through one call, whatever the runs
and qrels are:

* a **source**: :class:`Given` (qrels and runs given as files, dicts, DataFrames, ...: evaluated
  in memory, nothing stored), :class:`GivenAnswers` (generated answers and their judgments, given
  likewise), :class:`Stored` (runs and qrels sets of a store: the scores are
  stored; with ``subsamples`` a qrels set and its subsamples in one pass; with ``agg`` one
  leaderboard over several qrels sets) or :class:`OnSpark` (a store's Parquet layout, Spark SQL);
* an :class:`EvalRequest`: the metrics, the :class:`~evalstore.metrics.options.EvalOptions` and the
  :class:`~evalstore.intervals.request.IntervalRequest`.

:func:`check` holds the rules of which options go together, checked before any work; a broken
rule is an :class:`OptionConflict` naming the option at fault (the command line says it as a usage
error of that option). It gives :class:`Evaluation`: the results, or the leaderboard over sets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.arguments import metric_names, names
from ..errors import ArgumentError, MetricError
from ..intervals.request import NO_INTERVALS, IntervalRequest
from ..metrics.options import DEFAULTS, EvalOptions
from ..results.across import AGGREGATES as ACROSS_AGGREGATES

if TYPE_CHECKING:
    from ..db.handle import StoreHandle
    from ..results.across import AcrossBoard
    from ..results.eval_result import EvalResult

#: trec_eval's official measures: what ``eval`` computes when no metric is named.
OFFICIAL = ("official",)


class OptionConflict(MetricError):
    """Options that do not go together: ``option`` names the one at fault, as the keyword is
    spelled (``ci``, ``agg``, ``subsamples``, ...). The message names options as ``{ci}``, said by
    :meth:`said` in the caller's spelling (``ci=`` in Python, ``--ci`` on the command line)."""

    def __init__(self, template: str, option: str) -> None:
        self.template, self.option = template, option
        super().__init__(self.said(lambda name: f"{name}="))

    def said(self, spell: Callable[[str], str]) -> str:
        """The message with every option spelled by ``spell`` (its keyword name -> its spelling)."""
        return self.template.format_map(_Spelled(spell))


class _Spelled(dict):
    def __init__(self, spell: Callable[[str], str]) -> None:
        super().__init__()
        self.spell = spell

    def __missing__(self, key: str) -> str:
        return self.spell(key)


@dataclass(frozen=True)
class EvalRequest:
    """What to compute: ``metrics`` (names as anywhere in evalstore), ``options`` (how every metric
    is computed) and ``intervals`` (of the means and of the ranks; none by default)."""

    metrics: Sequence[str] | str = OFFICIAL  # a tuple of names once made
    options: EvalOptions = DEFAULTS
    intervals: IntervalRequest = NO_INTERVALS

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", tuple(metric_names(self.metrics)))

    @property
    def names(self) -> list[str]:
        """The metrics' names, in the order asked."""
        return list(self.metrics)


@dataclass(frozen=True)
class Given:
    """Qrels and runs given to the call: a path (a file, a glob, a list; ``-`` spooled by the
    caller), ``{topic: {doc: ...}}``, a DataFrame, an Arrow table, namedtuples, a ranx object; runs
    also ``{name: run}``. Evaluated in memory, nothing stored. ``gains``: the qrels' declared gains;
    ``memory_limit``, ``threads``, ``temp_directory``: DuckDB's resources for the evaluation."""

    qrels: Any
    runs: Any
    qrels_name: str = "qrels"
    run_name: str = "run"
    qrels_format: str = "trec"
    run_format: str = "trec"
    gains: str | Sequence[float] | None = None
    memory_limit: str | None = None
    threads: int | None = None
    temp_directory: str | None = None


@dataclass(frozen=True)
class Stored:
    """Runs and qrels sets of a store. ``qrels``: a set (None: the one rule of
    :mod:`evalstore.evaluation.default_qrels`), or several with ``agg``; ``runs``: names (None: all);
    ``subsamples``: also these subsamples of the set (``all``, names or fractions), in one pass;
    ``agg``: one leaderboard over the sets (``mean`` or ``borda``); ``save``: store the scores;
    ``recompute``: compute again what is stored; ``progress``: a progress bar (None: on a terminal);
    ``kinds``: instead of ``runs``, every run of these kinds (``submitted``, ``fused``, ``scratch``;
    :mod:`evalstore.db.run_kinds`)."""

    store: StoreHandle
    qrels: str | Sequence[str] | None = None
    runs: str | Sequence[str] | None = None
    subsamples: str | Sequence[str] | None = None
    include_parent: bool = True
    agg: str | None = None
    save: bool = True
    recompute: bool = False
    progress: bool | None = None
    kinds: str | Sequence[str] | None = None

    def qrels_sets(self) -> list[str]:
        """The qrels sets named (none: an empty list)."""
        return list(dict.fromkeys(names(self.qrels, "qrels set"))) if self.qrels is not None else []


@dataclass(frozen=True)
class OnSpark:
    """A store's Parquet layout (``evalstore export store DIR``) evaluated by Spark SQL: the scores
    are written beside it (``DIR/spark_scores/<qrels>``) unless ``write=False``. ``session``: a
    SparkSession (None: a local one)."""

    folder: str
    qrels: str
    runs: Sequence[str] | None = None
    session: Any = None
    write: bool = True


@dataclass(frozen=True)
class GivenAnswers:
    """Generated answers given to the call (TREC RAG answer dicts, ``{run: answers}`` or a path of
    JSON lines) and their judgments (nuggetizer's assignment records or a DataFrame of them, support
    labels, or qrels): evaluated in a store in memory by the store's ingest and evaluation, nothing
    kept (:mod:`evalstore.evaluation.answers`)."""

    qrels: Any
    answers: list[dict] | str
    qrels_name: str = "qrels"


Source = Given | GivenAnswers | Stored | OnSpark


@dataclass
class Evaluation:
    """What an evaluation gives: ``results``, one per qrels set (one; or a qrels set and its
    subsamples), or ``board``, the leaderboard over several qrels sets (then ``results`` holds each
    set's evaluation)."""

    results: list[EvalResult] = field(default_factory=list)
    board: AcrossBoard | None = None

    @property
    def result(self) -> EvalResult:
        """The one result of an evaluation of one qrels set."""
        if len(self.results) != 1 or self.board is not None:
            raise ArgumentError(f"this evaluation has {len(self.results)} results (subsamples, or several qrels sets)")
        return self.results[0]


def check(source: Source, request: EvalRequest) -> None:
    """Which options go together, before any work (:class:`OptionConflict` naming the one at fault)."""
    intervals = request.intervals
    if isinstance(source, OnSpark):
        if intervals.asked:
            raise OptionConflict("{ci} and {rank_ci} go with DuckDB, not with Spark", "ci")
        if request.options.convention != "trec_eval":
            raise OptionConflict("the Spark backend runs the trec_eval {convention} only", "convention")
        return
    if not isinstance(source, Stored):
        return
    if source.kinds is not None:
        if source.runs is not None:
            raise OptionConflict("name the runs ({runs}) or give their {kinds}, not both", "kinds")
        if source.agg is not None or source.subsamples is not None:
            raise OptionConflict("{kinds} chooses the runs of one qrels set: leave out {agg} and {subsamples}", "kinds")
    if source.agg is None:
        if len(source.qrels_sets()) > 1:
            raise OptionConflict("several qrels sets make one leaderboard with {agg} mean|borda", "qrels")
        return
    if source.agg not in ACROSS_AGGREGATES:
        given = repr(source.agg).replace("{", "{{").replace("}", "}}")
        ways = " or ".join(ACROSS_AGGREGATES)
        raise OptionConflict(f"aggregate over qrels sets ({{agg}}) by {ways}, not {given}", "agg")
    if source.subsamples is not None:
        raise OptionConflict("{agg} ranks runs over qrels sets: leave out {subsamples}", "subsamples")
    if intervals.ci is not None:
        raise OptionConflict("{agg} ranks runs over sets; {ci} goes with one qrels set", "ci")
    if intervals.rank_ci not in (None, "bootstrap"):
        raise OptionConflict(
            "rank intervals over qrels sets are bootstrap intervals (no t interval of a Borda count or of a mean "
            "over different topic sets): {rank_ci} bootstrap",
            "rank_ci",
        )

"""The result of an evaluation: per-topic scores and per-run summaries, in request order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..base.aggregate import aggregate
from ..base.optional import require_pandas
from ..intervals import means as interval_means
from ..intervals import ranks as interval_ranks

if TYPE_CHECKING:
    from ..intervals.means import IntervalSpec


class Stored(Protocol):
    """How a requested metric's scores are stored (:class:`evalstore.metrics.engine.StoredName`)."""

    @property
    def metric(self) -> str: ...  # the short name the scores are stored under
    @property
    def key(self) -> str: ...  # the identity of the scores within one evaluation
    @property
    def aggregate(self) -> str: ...  # 'mean', 'gmean' or 'sum'


@dataclass
class EvalResult:
    """Per-topic scores and per-run summaries of one evaluation against one qrels set.

    ``per_topic``: rows ``(run, topic, metric, value)``, by run, topic (byte order, as trec_eval
    prints them) and metric in request order; ``means``: rows ``(run, metric, summary, n_topics)``
    (the summary is the metric's aggregate: mean, geometric mean or sum); metric names are the
    names as requested (``stored_names`` maps each to the name its scores are stored under).
    ``intervals``: rows ``(run, metric, lo, hi)`` of the confidence interval of each summary, once
    :meth:`add_intervals` has computed them (``interval_spec`` says how; see
    :mod:`evalstore.intervals.means`)."""

    qrels: str
    metrics: list[str]  # display names, in request order
    stored_names: dict[str, str]  # display name -> the short name the scores are stored under
    per_topic: list[tuple[str, str, str, float]] = field(default_factory=list)  # run, topic, metric, value
    means: list[tuple[str, str, float, int]] = field(default_factory=list)  # run, metric, mean, n_topics
    aggregates: dict[str, str] = field(default_factory=dict)  # display name -> 'mean' | 'gmean' | 'sum'
    notes: list[str] = field(default_factory=list)  # for the reader, e.g. runs left out
    reused: int = (
        0  # stored (run, qrels, metric) evaluations reused instead of computed (evalstore.evaluation.incremental)
    )
    computed: int = 0  # (run, qrels, metric) evaluations computed by this call
    intervals: list[tuple[str, str, float | None, float | None]] = field(default_factory=list)  # run, metric, lo, hi
    interval_spec: IntervalSpec | None = None
    rank_intervals: list[tuple[str, str, int, int, int]] = field(default_factory=list)  # run, metric, rank, lo, hi
    rank_spec: IntervalSpec | None = None
    rank_widened: list[tuple[str, str]] = field(default_factory=list)  # (run, metric) widened to the rank
    _values: Any = field(default=None, init=False, repr=False, compare=False)  # value()'s dictionary

    def add_intervals(
        self, method: str = "t", level: float = 0.95, trials: int = 1000, seed: int = 0, *, memory: int | None = None
    ) -> EvalResult:
        """Compute the confidence interval of every summary (``method``: ``t`` or ``bootstrap``
        with ``trials`` resamples of the topics drawn with ``seed``; ``level``: the confidence
        level) into :attr:`intervals`; returns the result itself. Geometric means get the interval
        on the log scale, sums none (see :mod:`evalstore.intervals.means`). ``memory``: the memory
        limit in bytes the bootstrap sizes its work from (default: evalstore's default limit)."""
        how = interval_means.spec(method, level, trials, seed)
        self.intervals = interval_means.compute(self, how, memory)
        self.interval_spec = how
        return self

    def add_rank_intervals(
        self, method: str = "bootstrap", level: float = 0.95, trials: int = 1000, seed: int = 0
    ) -> EvalResult:
        """Each run's rank by each metric's mean with its interval (``method``: ``bootstrap``, the
        paired bootstrap over the topics with ``trials`` resamples drawn with ``seed``, or ``t``,
        from paired t intervals of the differences) into ``rank_intervals``; returns the result
        itself. See :mod:`evalstore.intervals.ranks`."""
        how = interval_ranks.spec(method, level, trials, seed)
        self.rank_intervals, self.rank_widened = interval_ranks.compute(self, how)
        self.rank_spec = how
        return self

    def rank(self, run: str, metric: str) -> tuple[int, int, int]:
        """``(rank, lo, hi)`` of a run by ``metric`` (after :meth:`add_rank_intervals`)."""
        for r, m, k, lo, hi in self.rank_intervals:
            if r == run and m == metric:
                return k, lo, hi
        raise KeyError((run, metric))

    def interval(self, run: str, metric: str) -> tuple[float | None, float | None]:
        """``(lo, hi)`` of a run's summary of ``metric`` (after :meth:`add_intervals`)."""
        for r, m, lo, hi in self.intervals:
            if r == run and m == metric:
                return lo, hi
        raise KeyError((run, metric))

    def mean(self, run: str, metric: str) -> float:
        for r, m, v, _ in self.means:
            if r == run and m == metric:
                return v
        raise KeyError((run, metric))

    def value(self, run: str, topic: str, metric: str) -> float:
        """The score of ``run`` on ``topic`` by ``metric`` (a dictionary made on the first call and
        again when ``per_topic`` is another list or has grown: a loop over every value stays linear)."""
        key = (id(self.per_topic), len(self.per_topic))
        if self._values is None or self._values[0] != key:
            values: dict[tuple[str, str, str], float] = {}
            for r, t, m, v in self.per_topic:
                values.setdefault((r, t, m), v)  # the first row, as a search from the top finds
            self._values = (key, values)
        try:
            return self._values[1][(run, topic, metric)]
        except KeyError:
            raise KeyError((run, topic, metric)) from None

    def table(self) -> dict[str, dict[str, float]]:
        """``{run: {metric: mean}}``."""
        out: dict[str, dict[str, float]] = {}
        for r, m, v, _ in self.means:
            out.setdefault(r, {})[m] = v
        return out

    def topics(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{run: {topic: {metric: value}}}``."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r, t, m, v in self.per_topic:
            out.setdefault(r, {}).setdefault(t, {})[m] = v
        return out

    # ------------------------------------------------------------------------------------------
    def to_arrow(self, *, means: bool = False) -> Any:
        """A pyarrow Table: per-topic rows ``(run, topic, metric, value)``, or with ``means=True``
        the summaries ``(run, metric, value, n_topics)``, and ``lo``, ``hi`` when intervals were
        computed (:meth:`add_intervals`), ``rank``, ``rank_lo``, ``rank_hi`` when rank intervals
        were (:meth:`add_rank_intervals`)."""
        import pyarrow as pa

        if means:
            cols = list(zip(*self.means)) or [(), (), (), ()]
            data = {
                "run": pa.array(cols[0], pa.string()),
                "metric": pa.array(cols[1], pa.string()),
                "value": pa.array(cols[2], pa.float64()),
                "n_topics": pa.array(cols[3], pa.int64()),
            }
            if self.interval_spec is not None:
                ci = {(r, m): (lo, hi) for r, m, lo, hi in self.intervals}
                data["lo"] = pa.array([ci.get((r, m), (None, None))[0] for r, m, _, _ in self.means], pa.float64())
                data["hi"] = pa.array([ci.get((r, m), (None, None))[1] for r, m, _, _ in self.means], pa.float64())
            if self.rank_spec is not None:
                ranks = {(r, m): (k, lo, hi) for r, m, k, lo, hi in self.rank_intervals}
                for i, name in enumerate(("rank", "rank_lo", "rank_hi")):
                    got = [ranks.get((r, m), (None, None, None))[i] for r, m, _, _ in self.means]
                    data[name] = pa.array(got, pa.int64())
            return pa.table(data)
        cols = list(zip(*self.per_topic)) or [(), (), (), ()]
        return pa.table(
            {
                "run": pa.array(cols[0], pa.string()),
                "topic": pa.array(cols[1], pa.string()),
                "metric": pa.array(cols[2], pa.string()),
                "value": pa.array(cols[3], pa.float64()),
            }
        )

    def to_df(self, *, wide: bool = True, means: bool = False) -> Any:
        """A pandas DataFrame (pandas is optional: ``pip install "evalstore[pandas]"``).

        Per-topic scores by default: ``wide=True`` gives one row per (run, topic) and a column per
        metric (metrics in request order), ``wide=False`` the long rows (run, topic, metric,
        value). ``means=True``: one row per run and a column per metric (``wide``), or the long
        summaries (run, metric, value, n_topics); with intervals (:meth:`add_intervals`) the wide
        table has ``<metric> lo`` and ``<metric> hi`` after each metric, the long one ``lo`` and
        ``hi`` columns; with rank intervals (:meth:`add_rank_intervals`) ``<metric> rank``,
        ``<metric> rank_lo`` and ``<metric> rank_hi`` (long: ``rank``, ``rank_lo``, ``rank_hi``)."""
        require_pandas()
        df = self.to_arrow(means=means).to_pandas()
        if not wide:
            return df
        index = ["run"] if means else ["run", "topic"]
        out = df.pivot(index=index, columns="metric", values="value")
        out = out.reindex(columns=[m for m in self.metrics if m in out.columns])
        if means and self.interval_spec is not None:
            lo = df.pivot(index=index, columns="metric", values="lo")
            hi = df.pivot(index=index, columns="metric", values="hi")
            for m in list(out.columns)[::-1]:
                at = list(out.columns).index(m) + 1
                out.insert(at, f"{m} hi", hi[m])
                out.insert(at, f"{m} lo", lo[m])
        if means and self.rank_spec is not None:
            for m in [c for c in self.metrics if c in df["metric"].values][::-1]:
                at = list(out.columns).index(f"{m} hi" if f"{m} hi" in out.columns else m) + 1
                for name in ("rank_hi", "rank_lo", "rank"):
                    out.insert(at, f"{m} {name}", df.pivot(index=index, columns="metric", values=name)[m])
        out.columns.name = None
        # runs in the order asked (the result's order), topics in byte order as trec_eval prints them
        order = {r: i for i, r in enumerate(dict.fromkeys(r for r, _, _, _ in self.means))}
        out = out.sort_index(key=lambda ix: ix.map(order) if ix.name == "run" else ix.map(lambda t: t.encode()))
        return out.reset_index()

    def __repr__(self) -> str:
        runs = len({r for r, _, _, _ in self.means})
        topics = len({t for _, t, _, _ in self.per_topic})
        shown = ", ".join(self.metrics[:6]) + (", ..." if len(self.metrics) > 6 else "")
        return (
            f"<EvalResult qrels={self.qrels!r}: {runs} run(s) x {topics} topic(s) x {len(self.metrics)} "
            f"metric(s) [{shown}]; .table(), .topics(), .to_df(), .to_arrow()>"
        )


def result_of_rows(
    qrels: str,
    stored: Mapping[str, Stored],
    runs: Sequence[str],
    rows: Iterable[tuple[str, str, str, float | None]],
    notes: Sequence[str] = (),
) -> EvalResult:
    """The :class:`EvalResult` of per-topic score rows ``(run, topic, key, value)`` keyed as stored:
    ``stored`` maps each requested metric (display name, in request order) to how it is stored
    (metrics that share a key share their rows); ``runs`` in output order. Per-topic rows come by
    run in that order, topic in byte order (as trec_eval prints them) and metric in request order; the means by
    :func:`evalstore.base.aggregate.aggregate`. The one builder of the store, Spark and file paths."""
    order = {d: i for i, d in enumerate(stored)}
    by_key: dict[str, list[str]] = {}
    for disp, name in stored.items():
        by_key.setdefault(name.key, []).append(disp)
    position = {run: i for i, run in enumerate(runs)}
    per_topic = [
        (run, topic, disp, value) for run, topic, key, value in rows if run in position for disp in by_key.get(key, [])
    ]
    # the topics' byte order ranked once per distinct topic, not encoded once per row
    topic_rank = {t: i for i, t in enumerate(sorted({r[1] for r in per_topic}, key=lambda t: t.encode("utf-8")))}
    per_topic.sort(key=lambda r: (position[r[0]], topic_rank[r[1]], order[r[2]]))
    groups: dict[tuple[str, str], list[float | None]] = {}
    for run, _, disp, value in per_topic:
        groups.setdefault((run, disp), []).append(value)
    return result_of_sorted(qrels, stored, runs, per_topic, groups, notes)


def result_of_sorted(
    qrels: str,
    stored: Mapping[str, Stored],
    runs: Sequence[str],
    per_topic: list[tuple[str, str, str, float | None]],
    groups: Mapping[tuple[str, str], Sequence[float | None]],
    notes: Sequence[str] = (),
) -> EvalResult:
    """The :class:`EvalResult` of per-topic rows already named and ordered as
    :func:`result_of_rows` orders them, with each (run, metric)'s values in ``groups``."""
    means = []
    for run in runs:
        for disp in stored:
            vals = groups.get((run, disp), [])
            means.append((run, disp, aggregate(vals, stored[disp].aggregate), sum(v is not None for v in vals)))
    return EvalResult(
        qrels=qrels,
        metrics=list(stored),
        stored_names={d: n.metric for d, n in stored.items()},
        per_topic=per_topic,  # type: ignore[arg-type]
        means=means,
        aggregates={d: n.aggregate for d, n in stored.items()},
        notes=list(notes),
    )

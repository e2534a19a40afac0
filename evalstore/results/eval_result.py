"""The result of an evaluation: per-topic scores and per-run summaries, in request order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..base.optional import require_pandas
from ..intervals import means as interval_means
from ..intervals import ranks as interval_ranks
from .shaping import SCORES_SCHEMA, Unshaped, rows_table, unshaped

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


class EvalResult:
    """Per-topic scores and per-run summaries of one evaluation against one qrels set.

    The per-topic scores are an Arrow table (:meth:`to_arrow`: ``run, topic, metric, value``, by
    run, topic (byte order, as trec_eval prints them) and metric in request order), shaped from the
    rows the evaluation computed when it is first read (:mod:`evalstore.results.shaping`), never
    before; ``per_topic`` gives them as Python rows ``(run, topic, metric, value)`` (made on first
    use: only a caller that asks for Python objects pays for one per score). ``means``: rows ``(run,
    metric, summary, n_topics)`` (the summary is the metric's aggregate: mean, geometric mean or
    sum), also computed on first use; metric names are the names as requested (``stored_names``
    maps each to the name its scores are stored under). ``intervals``: rows ``(run, metric, lo,
    hi)`` of the confidence interval of each summary, once :meth:`add_intervals` has computed them
    (``interval_spec`` says how; see :mod:`evalstore.intervals.means`).

    Made from Python rows (``per_topic=[...]``, ``means=[...]``) the result keeps them as given."""

    def __init__(
        self,
        qrels: str,
        metrics: list[str],
        stored_names: dict[str, str],
        per_topic: list[tuple[str, str, str, float]] | None = None,
        means: list[tuple[str, str, float, int]] | None = None,
        aggregates: dict[str, str] | None = None,
        notes: list[str] | None = None,
        reused: int = 0,
        computed: int = 0,
        intervals: list[tuple[str, str, float | None, float | None]] | None = None,
        interval_spec: IntervalSpec | None = None,
        rank_intervals: list[tuple[str, str, int, int, int]] | None = None,
        rank_spec: IntervalSpec | None = None,
        rank_widened: list[tuple[str, str]] | None = None,
        queries: dict[str, str] | None = None,
        *,
        scores: Unshaped | None = None,
    ) -> None:
        self.qrels = qrels
        self.metrics = metrics  # display names, in request order
        self.stored_names = stored_names  # display name -> the short name the scores are stored under
        self.aggregates = aggregates if aggregates is not None else {}  # display name -> mean | gmean | sum
        self.notes = notes if notes is not None else []  # for the reader, e.g. runs left out
        # stored (run, qrels, metric) evaluations reused instead of computed (evalstore.evaluation.incremental)
        self.reused = reused
        self.computed = computed  # (run, qrels, metric) evaluations computed by this call
        self.intervals = intervals if intervals is not None else []  # run, metric, lo, hi
        self.interval_spec = interval_spec
        self.rank_intervals = rank_intervals if rank_intervals is not None else []  # run, metric, rank, lo, hi
        self.rank_spec = rank_spec
        self.rank_widened = rank_widened if rank_widened is not None else []  # (run, metric) widened to the rank
        self.queries = queries if queries is not None else {}  # topic -> query text (a store's topic sets)
        self._unshaped = scores  # the rows as computed, shaped on first use
        self._table: pa.Table | None = None  # the ordered per-topic table
        self._rows: list[tuple[str, str, str, float]] | None = None  # per_topic as Python rows
        self._rows_seen: tuple[int, int] | None = None  # (id, len) of _rows when _table was made from it
        self._means = means if means is not None or scores is not None else []
        self._values: Any = None  # value()'s dictionary
        if per_topic is not None:
            self.per_topic = per_topic

    # ------------------------------------------------------------------ the scores
    @property
    def per_topic(self) -> list[tuple[str, str, str, float]]:
        """Per-topic rows ``(run, topic, metric, value)`` as Python objects (made on first use)."""
        if self._rows is None:
            t = self.to_arrow()
            self._rows = list(zip(*(t.column(i).to_pylist() for i in range(4))))
            self._rows_seen = (id(self._rows), len(self._rows))
        return self._rows

    @per_topic.setter
    def per_topic(self, rows: list[tuple[str, str, str, float]]) -> None:
        self._rows = rows
        self._rows_seen = None
        self._table = None
        self._unshaped = None

    @property
    def means(self) -> list[tuple[str, str, float, int]]:
        """Rows ``(run, metric, summary, n_topics)`` (computed on first use)."""
        if self._means is None:
            self._means = self._unshaped.means() if self._unshaped is not None else []
        return self._means

    @means.setter
    def means(self, rows: list[tuple[str, str, float, int]]) -> None:
        self._means = rows

    def scores(self) -> pa.Table:
        """The per-topic scores as a pyarrow Table ``run, topic, metric, value`` (ordered as
        :attr:`per_topic`); no Python object per score."""
        if self._rows is not None and (id(self._rows), len(self._rows)) != self._rows_seen:
            self._table = _table_of_rows(self._rows)  # given as Python rows, or changed since
            self._rows_seen = (id(self._rows), len(self._rows))
        if self._table is None:
            self._table = self._unshaped.scores() if self._unshaped is not None else _table_of_rows([])
        return self._table

    def score_matrix(self, metric: str, runs: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """``(topics, X)``: the topics scored by ``metric`` for any of ``runs`` (byte order) and the
        runs x topics matrix of their scores (NaN where a run has none, or None), from the Arrow
        table (no Python object per score)."""
        t = self.to_arrow()
        t = t.filter(pc.equal(t.column("metric"), metric))
        wanted = pa.array(list(runs), pa.string())
        t = t.filter(pc.is_in(t.column("run"), value_set=wanted))
        topics = pc.unique(t.column("topic"))
        topics = topics.take(pc.sort_indices(topics))
        X = np.full((len(runs), len(topics)), np.nan)
        if t.num_rows:
            i = pc.index_in(t.column("run"), value_set=wanted).to_numpy()
            j = pc.index_in(t.column("topic"), value_set=topics).to_numpy()
            X[i, j] = pc.fill_null(t.column("value"), np.nan).to_numpy()
        return topics.to_pylist(), X

    def score_groups(self) -> dict[tuple[str, str], np.ndarray]:
        """``{(run, metric): values}``: each (run, metric)'s scores in topic order, missing ones
        (None, NaN) left out (no Python object per score)."""
        t = self.to_arrow()
        if not t.num_rows:
            return {}
        v = pc.fill_null(t.column("value"), np.nan).to_numpy()
        runs = pc.unique(t.column("run"))
        metrics = pc.unique(t.column("metric"))
        key = pc.index_in(t.column("run"), value_set=runs).to_numpy().astype(np.int64) * len(metrics)
        key += pc.index_in(t.column("metric"), value_set=metrics).to_numpy()
        keep = ~np.isnan(v)
        key, v = key[keep], v[keep]
        order = np.argsort(key, kind="stable")
        key, v = key[order], v[order]
        cuts = np.flatnonzero(np.diff(key)) + 1
        starts = np.concatenate(([0], cuts)) if len(key) else np.array([], dtype=np.int64)
        names_r, names_m = runs.to_pylist(), metrics.to_pylist()
        out = {}
        for start, chunk in zip(starts, np.split(v, cuts) if len(key) else []):
            k = int(key[start])
            out[(names_r[k // len(names_m)], names_m[k % len(names_m)])] = chunk
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvalResult):
            return NotImplemented
        fields = ("qrels", "metrics", "stored_names", "per_topic", "means", "aggregates", "notes", "reused",
                  "computed", "intervals", "interval_spec", "rank_intervals", "rank_spec", "rank_widened",
                  "queries")  # fmt: skip
        return all(getattr(self, f) == getattr(other, f) for f in fields)

    __hash__ = None  # type: ignore[assignment]

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
        self, method: str = "bootstrap", level: float = 0.95, trials: int = 1000, seed: int = 0, *,
        memory: int | None = None,
    ) -> EvalResult:  # fmt: skip
        """Each run's rank by each metric's mean with its interval (``method``: ``bootstrap``, the
        paired bootstrap over the topics with ``trials`` resamples drawn with ``seed``, or ``t``,
        from paired t intervals of the differences) into ``rank_intervals``; returns the result
        itself. ``memory``: the memory limit in bytes the bootstrap's blocks of resamples are sized
        from (default: the default limit; any ``trials`` fits). See :mod:`evalstore.intervals.ranks`."""
        how = interval_ranks.spec(method, level, trials, seed)
        self.rank_intervals, self.rank_widened = interval_ranks.compute(self, how, memory)
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
        """The score of ``run`` on ``topic`` by ``metric`` (a dictionary made on the first call, and
        again when ``per_topic`` is another list or has grown: a loop over every value stays linear)."""
        rows = self._rows
        key = (id(rows), len(rows)) if rows is not None else None
        if self._values is None or self._values[0] != key:
            values: dict[tuple[str, str, str], float] = {}
            if rows is not None:
                for r, t, m, v in rows:
                    values.setdefault((r, t, m), v)  # the first row, as a search from the top finds
            else:
                cols = [c.to_pylist() for c in self.to_arrow().columns]
                for r, t, m, v in zip(*cols):
                    values.setdefault((r, t, m), v)
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
        rows = self._rows if self._rows is not None else zip(*(c.to_pylist() for c in self.to_arrow().columns))
        for r, t, m, v in rows:
            out.setdefault(r, {}).setdefault(t, {})[m] = v
        return out

    # ------------------------------------------------------------------------------------------
    def to_arrow(self, *, means: bool = False) -> Any:
        """A pyarrow Table: per-topic rows ``(run, topic, metric, value)``, or with ``means=True``
        the summaries ``(run, metric, value, n_topics)``, and ``lo``, ``hi`` when intervals were
        computed (:meth:`add_intervals`), ``rank``, ``rank_lo``, ``rank_hi`` when rank intervals
        were (:meth:`add_rank_intervals`)."""
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
        return self.scores()

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
        topics = pc.count_distinct(self.to_arrow().column("topic")).as_py()
        shown = ", ".join(self.metrics[:6]) + (", ..." if len(self.metrics) > 6 else "")
        return (
            f"<EvalResult qrels={self.qrels!r}: {runs} run(s) x {topics} topic(s) x {len(self.metrics)} "
            f"metric(s) [{shown}]; .table(), .topics(), .to_df(), .to_arrow()>"
        )


def _table_of_rows(rows: Sequence[tuple[str, str, str, float | None]]) -> pa.Table:
    cols = list(zip(*rows)) or [(), (), (), ()]
    return pa.Table.from_arrays(
        [pa.array(cols[0], pa.string()), pa.array(cols[1], pa.string()), pa.array(cols[2], pa.string()),
         pa.array(cols[3], pa.float64())],
        schema=SCORES_SCHEMA,
    )  # fmt: skip


def result_of_arrow(
    qrels: str,
    stored: Mapping[str, Stored],
    runs: Mapping[str, int],
    rows: pa.Table,
    notes: Sequence[str] = (),
) -> EvalResult:
    """The :class:`EvalResult` of per-topic score rows computed as an Arrow table ``run_id, topic,
    key, value`` (any order; :data:`evalstore.results.shaping.RAW_SCHEMA`), keyed as stored:
    ``stored`` maps each requested metric (display name, in request order) to how it is stored
    (metrics that share a key share their rows); ``runs`` maps each run's name, in output order, to
    its id in the rows (rows of other runs are left out). The rows are named, ordered (run in that
    order, topic in byte order as trec_eval prints them, metric in request order) and summarised
    (:func:`evalstore.base.aggregate.aggregate`'s rule) when the result is first read. The one
    builder of the store, Spark and in-memory paths."""
    return EvalResult(
        qrels=qrels,
        metrics=list(stored),
        stored_names={d: n.metric for d, n in stored.items()},
        aggregates={d: n.aggregate for d, n in stored.items()},
        notes=list(notes),
        scores=unshaped(rows, runs, stored),
    )


def result_of_rows(
    qrels: str,
    stored: Mapping[str, Stored],
    runs: Sequence[str],
    rows: Iterable[tuple[str, str, str, float | None]],
    notes: Sequence[str] = (),
) -> EvalResult:
    """:func:`result_of_arrow` of per-topic rows given as Python tuples ``(run, topic, key, value)``
    (``runs``: the runs' names in output order)."""
    ids = {run: i + 1 for i, run in enumerate(runs)}
    return result_of_arrow(qrels, stored, ids, rows_table(list(rows), ids), notes)

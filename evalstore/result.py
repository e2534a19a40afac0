"""The result of an evaluation: per-topic scores and per-run summaries, in request order."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EvalResult:
    """Per-topic scores and per-run summaries of one evaluation against one qrels set.

    ``per_topic``: rows ``(run, topic, metric, value)``, by run, topic (byte order, as trec_eval
    prints them) and metric in request order; ``means``: rows ``(run, metric, summary, n_topics)``
    (the summary is the metric's aggregate: mean, geometric mean or sum); metric names are the
    names as requested (``canonical`` maps each to its stored name)."""

    qrels: str
    metrics: list[str]  # display names, in request order
    canonical: dict[str, str]  # display name -> canonical name
    per_topic: list[tuple[str, str, str, float]] = field(default_factory=list)  # run, topic, metric, value
    means: list[tuple[str, str, float, int]] = field(default_factory=list)  # run, metric, mean, n_topics
    aggregates: dict[str, str] = field(default_factory=dict)  # display name -> 'mean' | 'gmean' | 'sum'

    def mean(self, run: str, metric: str) -> float:
        for r, m, v, _ in self.means:
            if r == run and m == metric:
                return v
        raise KeyError((run, metric))

    def value(self, run: str, topic: str, metric: str) -> float:
        for r, t, m, v in self.per_topic:
            if r == run and t == topic and m == metric:
                return v
        raise KeyError((run, topic, metric))

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

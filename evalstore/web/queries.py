"""What the pages read from a store: bound SQL over the documented views only (``runs``,
``leaderboard``, ``scores``, ``run_rows``, ``qrels``, ``topics``, ``topic_sets``, ``docs``,
``doc_sets``, ``meta_runs`` and the ``meta_*`` tables) and, for the cheap catalogue of what was
evaluated, the library's :func:`evalstore.db.catalogue.evaluated` (it owns the internal table it
reads). Every value reaches SQL as a parameter.

The statistics are the library's: a mean is the ``leaderboard`` view's, its interval the stored one
or :func:`evalstore.intervals.means.of_scores`' (:func:`leaderboard`); nothing here computes a test or an
interval of its own.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..db.catalogue import evaluated, subsample_names
from ..intervals import means
from ..intervals.means import DEFAULT_LEVEL
from .render import percent

if TYPE_CHECKING:
    from ..store import Store

#: the level of the interval the leaderboard computes where none is stored (``eval --ci``'s default)
CI_LEVEL = DEFAULT_LEVEL


def topic_key(topic: str) -> tuple[int, int, str]:
    """Topics in natural order: numbers by value (``2`` before ``10``), then the others by text."""
    if re.fullmatch(r"\d{1,18}", topic):
        return (0, int(topic), topic)
    return (1, 0, topic)


@dataclass(frozen=True)
class Catalogue:
    """Which qrels sets have scores, and for each its metrics (in the order they were first
    evaluated) with the number of runs evaluated."""

    metrics: dict[str, dict[str, int]]  # qrels -> {metric: runs}, metrics in stored order
    subsamples: frozenset[str] = frozenset()  # the qrels sets that are subsamples of another

    @property
    def qrels(self) -> list[str]:
        return list(self.metrics)

    @property
    def judged_sets(self) -> list[str]:
        """The qrels sets with scores that are not subsamples (the choices a command offers by
        default, as :mod:`evalstore.evaluation.default_qrels` does); all of them if every one is a subsample."""
        return [q for q in self.metrics if q not in self.subsamples] or self.qrels

    def default_qrels(self) -> str | None:
        """The qrels set with the most evaluations (ties: by name)."""
        if not self.metrics:
            return None
        return min(self.metrics, key=lambda q: (-sum(self.metrics[q].values()), q))

    def default_metric(self, qrels: str, preferred: str | None = None) -> str | None:
        """``preferred`` (``serve --metric``) when it has scores on ``qrels``, else the metric the
        user evaluated first on it (stored order: the earliest evaluation, then the order the
        metrics were asked for)."""
        ms = self.metrics.get(qrels) or {}
        if preferred and preferred in ms:
            return preferred
        return next(iter(ms), None)


def catalogue(store: Store) -> Catalogue:
    return Catalogue(evaluated(store.con), frozenset(subsample_names(store.con)))


def run_names(store: Store) -> list[str]:
    return [r[0] for r in store.con.execute("SELECT name FROM runs ORDER BY name").fetchall()]


def run_exists(store: Store, run: str) -> bool:
    return bool(store.con.execute("SELECT count(*) FROM runs WHERE name = ?", [run]).fetchall()[0][0])


@dataclass
class BoardRow:
    run: str
    mean: float | None
    n_topics: int
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    aggregate: str
    rank: int = 0
    ci_method: str | None = None  # 'stored t 95 %', 't 95 %' (computed here), None: no interval
    ci_level: float | None = None  # the interval's confidence level (None: no interval)
    kind: str = "submitted"  # what the run is: submitted, fused, scratch (runs.kind)


def leaderboard(store: Store, qrels: str, metric: str) -> list[BoardRow]:
    """The runs evaluated with ``metric`` on ``qrels``, best mean first (the leaderboard view), each
    with its interval: the one stored with the evaluation (``eval --ci``: the view's ci_lo/ci_hi)
    where there is one, else a :data:`CI_LEVEL` t interval computed by :func:`evalstore.intervals.means.of_scores`
    (the same function as ``eval --ci t``: on the log scale for a geometric mean, none for a sum)."""

    con = store.con
    rows = con.execute(
        """
        WITH spread AS (
            SELECT run, stddev_samp(value) AS sd FROM scores
            WHERE qrels = $qrels AND metric = $metric AND value IS NOT NULL GROUP BY run
        )
        SELECT lb.run, lb.mean, lb.n_topics, s.sd, lb.ci_lo, lb.ci_hi, lb.aggregate, lb.ci_method, lb.ci_level,
               coalesce(r.kind, 'submitted')
        FROM leaderboard lb LEFT JOIN spread s USING (run) LEFT JOIN runs r ON r.name = lb.run
        WHERE lb.qrels = $qrels AND lb.metric = $metric
        ORDER BY lb.mean DESC NULLS LAST, lb.run
        """,
        {"qrels": qrels, "metric": metric},
    ).fetchall()
    out = []
    for r in rows:
        stored = r[4] is not None and r[5] is not None
        label = f"stored {r[7]} {percent(r[8])}" if stored else None
        level = float(r[8]) if stored else None
        row = BoardRow(
            r[0], _f(r[1]), int(r[2]), _f(r[3]), _f(r[4]), _f(r[5]), r[6], ci_method=label, ci_level=level, kind=r[9]
        )
        out.append(row)
    lacking = [b for b in out if b.ci_method is None and means.scale_of(b.aggregate) is not None]
    if lacking:
        values = dict(
            con.execute(
                "SELECT run, list(value) FROM scores WHERE qrels = ? AND metric = ? AND value IS NOT NULL "
                "AND NOT isnan(value) AND list_contains(?, run) GROUP BY run",
                [qrels, metric, [b.run for b in lacking]],
            ).fetchall()
        )
        how = means.spec("t", CI_LEVEL)
        found = means.of_scores(
            {b.run: values.get(b.run, []) for b in lacking}, {b.run: b.aggregate for b in lacking}, how
        )
        for b in lacking:
            if b.run in found:
                b.ci_low, b.ci_high = found[b.run]
                b.ci_method, b.ci_level = f"t {percent(CI_LEVEL)}", CI_LEVEL
    for i, b in enumerate(out, start=1):
        b.rank = i
    return out


def _f(v: Any) -> float | None:
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


@dataclass
class TopicStats:
    topic: str
    median: float | None
    best: float | None
    worst: float | None
    n_runs: int


def topic_stats(store: Store, qrels: str, metric: str, topics: Sequence[str] | None = None) -> dict[str, TopicStats]:
    """Per topic (of ``topics``; None: every topic): the median, best and worst score of all runs
    evaluated with ``metric`` on ``qrels``."""
    only = "" if topics is None else "AND list_contains($topics, topic)"
    rows = store.con.execute(
        "SELECT topic, median(value), max(value), min(value), count(value) FROM scores "
        f"WHERE qrels = $qrels AND metric = $metric {only} GROUP BY topic",
        {"qrels": qrels, "metric": metric, **({} if topics is None else {"topics": list(topics)})},
    ).fetchall()
    return {r[0]: TopicStats(r[0], _f(r[1]), _f(r[2]), _f(r[3]), int(r[4])) for r in rows}


def run_scores(store: Store, run: str, qrels: str, metric: str) -> dict[str, float | None]:
    rows = store.con.execute(
        "SELECT topic, value FROM scores WHERE run = ? AND qrels = ? AND metric = ?", [run, qrels, metric]
    ).fetchall()
    return {t: _f(v) for t, v in rows}


#: SQL of :func:`topic_key`'s order: numbers (up to 18 digits) by value first, then the others by text
TOPIC_ORDER = (
    "CASE WHEN regexp_full_match(topic, '[0-9]{1,18}') THEN 0 ELSE 1 END, "
    "CASE WHEN regexp_full_match(topic, '[0-9]{1,18}') THEN CAST(topic AS BIGINT) END, topic"
)


def run_topic_count(store: Store, run: str, qrels: str, metric: str) -> int:
    """The number of topics ``run`` has a score of ``metric`` on ``qrels`` for."""
    return int(
        store.con.execute(
            "SELECT count(*) FROM scores WHERE run = ? AND qrels = ? AND metric = ?", [run, qrels, metric]
        ).fetchall()[0][0]
    )


def run_scores_page(
    store: Store, run: str, qrels: str, metric: str, limit: int, offset: int
) -> list[tuple[str, float | None]]:
    """``limit`` of the run's ``(topic, score)`` from ``offset`` on, topics in natural order."""
    rows = store.con.execute(
        f"SELECT topic, value FROM scores WHERE run = ? AND qrels = ? AND metric = ? ORDER BY {TOPIC_ORDER} "
        "LIMIT ? OFFSET ?",
        [run, qrels, metric, int(limit), int(offset)],
    ).fetchall()
    return [(t, _f(v)) for t, v in rows]


def run_against_topics(store: Store, run: str, qrels: str, metric: str) -> tuple[int, int, int, int]:
    """Over all the run's topics: how many it scores above, below and at the median of all runs,
    and at the best score (in SQL: for a store of any number of topics)."""
    row = store.con.execute(
        """WITH t AS (SELECT topic, median(value) AS med, max(value) AS best FROM scores
                      WHERE qrels = $qrels AND metric = $metric GROUP BY topic),
                r AS (SELECT topic, value FROM scores WHERE run = $run AND qrels = $qrels AND metric = $metric)
           SELECT count(*) FILTER (WHERE r.value > t.med), count(*) FILTER (WHERE r.value < t.med),
                  count(*) FILTER (WHERE r.value = t.med), count(*) FILTER (WHERE r.value >= t.best)
           FROM r JOIN t USING (topic)""",
        {"qrels": qrels, "metric": metric, "run": run},
    ).fetchall()[0]
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


def scores_on_topic(store: Store, qrels: str, topic: str) -> dict[tuple[str, str], float | None]:
    """``{(run, metric): value}`` of every run and metric on one topic."""
    rows = store.con.execute(
        "SELECT run, metric, value FROM scores WHERE qrels = ? AND topic = ?", [qrels, topic]
    ).fetchall()
    return {(r, m): _f(v) for r, m, v in rows}


@dataclass
class Ranked:
    rank: int
    doc: str
    score: float | None
    grade: int | None


def ranked_list(store: Store, run: str, topic: str, qrels: str, depth: int) -> list[Ranked]:
    """The first ``depth`` documents of ``run`` on ``topic`` in evaluation order, with their grades."""
    rows = store.con.execute(
        "SELECT r.rank, r.doc, r.score, j.grade FROM run_rows r "
        "LEFT JOIN (SELECT doc, grade FROM qrels WHERE qrels = $qrels AND topic = $topic) j USING (doc) "
        "WHERE r.run = $run AND r.topic = $topic AND r.rank <= $depth ORDER BY r.rank",
        {"qrels": qrels, "topic": topic, "run": run, "depth": depth},
    ).fetchall()
    return [Ranked(int(r[0]), r[1], _f(r[2]), None if r[3] is None else int(r[3])) for r in rows]


def run_length(store: Store, run: str, topic: str) -> int:
    return int(
        store.con.execute("SELECT count(*) FROM run_rows WHERE run = ? AND topic = ?", [run, topic]).fetchall()[0][0]
    )


def judgments(store: Store, qrels: str, topic: str) -> list[tuple[str, int]]:
    """The judged documents of a topic, highest grade first."""
    rows = store.con.execute(
        "SELECT doc, grade FROM qrels WHERE qrels = ? AND topic = ? ORDER BY grade DESC, doc", [qrels, topic]
    ).fetchall()
    return [(d, int(g)) for d, g in rows]


def ranks_of(store: Store, runs: Sequence[str], topic: str, docs: Sequence[str]) -> dict[tuple[str, str], int]:
    """``{(run, doc): rank}`` of the given documents in the given runs on one topic."""
    if not docs or not runs:
        return {}
    rows = store.con.execute(
        "SELECT run, doc, rank FROM run_rows WHERE topic = $topic AND list_contains($runs, run) "
        "AND list_contains($docs, doc)",
        {"topic": topic, "runs": list(runs), "docs": list(docs)},
    ).fetchall()
    return {(r, d): int(k) for r, d, k in rows}


def topic_known(store: Store, qrels: str, topic: str) -> bool:
    """The topic has judgments in ``qrels`` or scores on it."""
    con = store.con
    if con.execute("SELECT count(*) FROM qrels WHERE qrels = ? AND topic = ?", [qrels, topic]).fetchall()[0][0]:
        return True
    return bool(
        con.execute("SELECT count(*) FROM scores WHERE qrels = ? AND topic = ?", [qrels, topic]).fetchall()[0][0]
    )


def topics_with_scores(store: Store, qrels: str, metric: str) -> list[str]:
    rows = store.con.execute(
        "SELECT DISTINCT topic FROM scores WHERE qrels = ? AND metric = ?", [qrels, metric]
    ).fetchall()
    return sorted((r[0] for r in rows), key=topic_key)


# --------------------------------------------------------------------------- meta-evaluation
@dataclass
class StoredAnalysis:
    analysis_id: int
    kind: str
    params: dict[str, Any]
    seed: int | None
    inputs: dict[str, Any]
    version: str
    created_at: Any
    tables: dict[str, list[dict[str, Any]]]


#: the result tables each kind of analysis fills (migrations 0003, 0005, 0015 and 0017)
META_TABLES = {
    "kendall": ("meta_correlations",),
    "swap": ("meta_swap", "meta_swap_bins"),
    "discpower": ("meta_discpower", "meta_pair_tests"),
    "tests": ("meta_discpower", "meta_pair_tests"),
    "robustness": ("meta_robustness", "meta_knees"),
    "compare": ("meta_pair_tests", "meta_effects"),
    "agree": ("meta_agree_labels", "meta_agree_ranking"),
    "reusability": ("meta_reusability", "meta_reusability_runs", "meta_reusability_groups"),
}


def meta_count(store: Store) -> int:
    return int(store.con.execute("SELECT count(*) FROM meta_runs").fetchall()[0][0])


def analyses(store: Store, limit: int) -> list[StoredAnalysis]:
    """The most recent ``limit`` stored analyses with their result rows."""
    con = store.con
    heads = con.execute(
        "SELECT analysis_id, kind, params, seed, inputs, evalstore_version, created_at FROM meta_runs "
        "ORDER BY analysis_id DESC LIMIT ?",
        [limit],
    ).fetchall()
    out = []
    for aid, kind, params, seed, inputs, version, created in heads:
        tables: dict[str, list[dict[str, Any]]] = {}
        for table in META_TABLES.get(kind, ()):
            cur = con.execute(f"SELECT * FROM {table} WHERE analysis_id = ?", [aid])  # table: a fixed name above
            cols = [d[0] for d in cur.description]
            tables[table] = [dict(zip(cols, r)) for r in cur.fetchall()]
        out.append(StoredAnalysis(int(aid), kind, _json(params), seed, _json(inputs), version, created, tables))
    return out


def _json(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        v = json.loads(text) if text else {}
    except (TypeError, ValueError):
        return {}
    return v if isinstance(v, dict) else {}


# --------------------------------------------------------------------------- topic and document texts
#: characters of a document's text shown beside it in a ranked list
SNIPPET_CHARS = 240


@dataclass
class TopicText:
    topics: str  # the topic set
    query: str
    title: str | None
    description: str | None
    narrative: str | None


def topic_texts(store: Store, topic: str) -> list[TopicText]:
    """The texts of ``topic`` in every topic set that has it (view ``topics``), newest set first."""
    rows = store.con.execute(
        "SELECT t.topics, t.query, t.title, t.description, t.narrative FROM topics t "
        "JOIN topic_sets s ON s.name = t.topics WHERE t.topic = ? ORDER BY s.ingested_at DESC, t.topics",
        [topic],
    ).fetchall()
    return [TopicText(*r) for r in rows]


def doc_snippets(store: Store, docs: Sequence[str]) -> dict[str, str]:
    """The first :data:`SNIPPET_CHARS` characters of each document's text (view ``docs``; the newest
    doc set that has the document)."""
    if not docs:
        return {}
    rows = store.con.execute(
        "SELECT d.doc, left(d.text, $n + 1) FROM docs d JOIN doc_sets s ON s.name = d.docs "
        "WHERE list_contains($docs, d.doc) "
        "QUALIFY row_number() OVER (PARTITION BY d.doc ORDER BY s.ingested_at DESC) = 1",
        {"docs": list(docs), "n": SNIPPET_CHARS},
    ).fetchall()
    return {d: (t if len(t) <= SNIPPET_CHARS else t[:SNIPPET_CHARS].rstrip() + " …") for d, t in rows}


def has_texts(store: Store, what: str) -> bool:
    """The store holds any topic set (``what='topics'``) or doc set (``'docs'``)."""
    table = {"topics": "topic_sets", "docs": "doc_sets"}[what]
    return bool(store.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])


def run_qrels_overlap(store: Store, run: str, qrels: str) -> tuple[int, list[str]]:
    """How many topics of ``run`` have judgments in ``qrels``, and the qrels sets ``run`` has scores on."""
    con = store.con
    shared = con.execute(
        "SELECT count(*) FROM (SELECT DISTINCT topic FROM run_rows WHERE run = $run) r "
        "WHERE r.topic IN (SELECT DISTINCT topic FROM qrels WHERE qrels = $qrels)",
        {"run": run, "qrels": qrels},
    ).fetchall()[0][0]
    scored = [
        r[0]
        for r in con.execute("SELECT DISTINCT qrels FROM leaderboard WHERE run = ? ORDER BY qrels", [run]).fetchall()
    ]
    return int(shared), scored

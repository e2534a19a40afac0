"""Reproducibility and replicability of a baseline/advanced pair (Breuer et al., SIGIR 2020), as
repro_eval 0.5.0 computes them; docs/reproducibility.md has the definitions and the conventions.

An original experiment compares a baseline run B with an advanced run A on qrels Q. Its
reproduction gives RB and RA:

* **reproducibility** (``rep_qrels=None``): RB and RA ran on the same collection, evaluated with
  Q. Measured: KTU and RBO of each original ranking with its reproduction (per topic, averaged),
  RMSE and normalised RMSE of the per-topic scores, the Effect Ratio (ER) and ΔRI of the pair,
  and a paired t-test of each original run against its reproduction;
* **replicability** (``rep_qrels=Q2``): RB and RA ran on another collection, evaluated with Q2.
  Topics differ, so only ER, ΔRI and unpaired (Student, equal variances) t-tests are computed,
  as repro_eval's ``RplEvaluator`` does.

Per-topic scores are evalstore's own (stored scores, evaluated first when missing, through
:func:`evalstore.meta.matrix.score_matrices`).

Topics missing on one side: repro_eval fails on them (irgroup/repro_eval issue #5); here the rule
is ``missing=`` as in the other analyses: ``'error'`` (default) names them; ``'drop_topics'``
keeps the topics both sides have (scores: the topics every run of a matrix is scored on;
rankings: the topics both rankings have); ``'zero'`` scores a missing topic 0 (scores as trec_eval
-c; KTU and RBO 0 for a topic one ranking lacks). What was left out or filled is in the notes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arguments import metric_names
from ..errors import MetaError
from ..meta.common import Analysis, finish, need_mean, num
from ..meta.matrix import Column, ScoreMatrix, normalise_missing, score_matrices
from ..metrics.options import EvalOptions
from ..stats.significance import paired_t
from . import orderings

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: RBO's persistence as Breuer et al. (2020) use it; repro_eval's own default (``RBO_P``) is 0.95.
RBO_P = 0.8
#: The rank cut of KTU and RBO (repro_eval's ``RUN_LENGTH`` and ``RBO_DEPTH``).
DEPTH = 1000
SIDES = ("baseline", "advanced")


@dataclass
class Reproduction:
    """The result of :func:`reproducibility`.

    ``kind``: ``'reproducibility'`` or ``'replicability'``; ``runs``: the four runs by role
    (``baseline``, ``advanced``, ``rep_baseline``, ``rep_advanced``); ``metrics``: as requested.
    The measures are dicts in repro_eval's shape (``ktu``, ``rbo``, ``rmse``, ``nrmse`` are None
    for replicability); ``arp``: mean score of each run per metric (``{role: {metric: v}}``);
    ``per_topic``: KTU and RBO per topic (``{'ktu': {side: {topic: v}}, ...}``); ``topics``: the
    topics each comparison used; ``notes``: topics left out or filled, lists compared on fewer
    positions."""

    kind: str
    qrels: str
    rep_qrels: str | None
    runs: dict[str, str]
    metrics: list[str]
    ktu: dict[str, float | None] | None
    rbo: dict[str, float | None] | None
    rmse: dict[str, dict[str, float | None]] | None
    nrmse: dict[str, dict[str, float | None]] | None
    er: dict[str, float | None]
    dri: dict[str, float | None]
    ttest: dict[str, dict[str, float | None]]
    arp: dict[str, dict[str, float | None]]
    per_topic: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    topics: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    analysis: Analysis | None = None

    @property
    def analysis_id(self) -> int | None:
        return self.analysis.analysis_id if self.analysis is not None else None

    def to_dict(self) -> dict[str, Any]:
        """repro_eval's shape: ``{"ktu": {"baseline": x, "advanced": y}, "rbo": ..., "rmse":
        {"baseline": {metric: v}, ...}, "nrmse": ..., "er": {metric: v}, "dri": ...,
        "ttest": {"baseline": {metric: p}, ...}}`` (replicability: er, dri and ttest only).
        Undefined values (a zero denominator) are None."""
        out: dict[str, Any] = {}
        if self.kind == "reproducibility":
            out.update(ktu=self.ktu, rbo=self.rbo, rmse=self.rmse, nrmse=self.nrmse)
        out.update(er=self.er, dri=self.dri, ttest=self.ttest)
        return out


# --------------------------------------------------------------------------- the measures
def _mean(x: np.ndarray) -> float:
    return float(np.mean(x))


def _ratio(a: float, b: float) -> float | None:
    """a / b; None when b is 0 (repro_eval divides numpy floats: inf or nan with a warning)."""
    return None if b == 0 else num(a / b)


def rmse(orig: np.ndarray, rep: np.ndarray) -> float:
    """Root mean square error of per-topic scores (same topics, same order)."""
    d = np.asarray(orig, dtype=np.float64) - np.asarray(rep, dtype=np.float64)
    return math.sqrt(float(np.mean(d * d)))


def nrmse(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """RMSE divided by the largest RMSE a reproduction could have for scores in [0, 1]:
    ``sqrt(mean(max(x, 1 - x)^2))`` over the original scores x (repro_eval's ``nRMSE``)."""
    x = np.asarray(orig, dtype=np.float64)
    worst = math.sqrt(float(np.mean(np.maximum(x, 1 - x) ** 2)))
    return _ratio(rmse(orig, rep), worst)


def effect_ratio(b: np.ndarray, a: np.ndarray, rb: np.ndarray, ra: np.ndarray) -> float | None:
    """ER: mean per-topic improvement of the reproduction / that of the original
    (``mean(ra - rb) / mean(a - b)``, each pair over its own topics)."""
    return _ratio(_mean(np.asarray(ra) - np.asarray(rb)), _mean(np.asarray(a) - np.asarray(b)))


def delta_ri(b: np.ndarray, a: np.ndarray, rb: np.ndarray, ra: np.ndarray) -> float | None:
    """ΔRI: relative improvement of the original minus that of the reproduction, with
    ``RI = (mean(a) - mean(b)) / mean(b)``."""
    ri = _ratio(_mean(a) - _mean(b), _mean(b))
    rri = _ratio(_mean(ra) - _mean(rb), _mean(rb))
    return None if ri is None or rri is None else num(ri - rri)


def t_test_p(orig: np.ndarray, rep: np.ndarray, paired: bool) -> float | None:
    """Two-sided p-value of the t-test of an original run's scores against its reproduction's:
    paired (``scipy.stats.ttest_rel``; same topics) or unpaired (``ttest_ind``, equal variances).
    Two identical score vectors give p = 1 (repro_eval: NaN unless every measure is identical).
    None (undefined) with fewer than 2 topics (paired) or 3 scores in all (unpaired)."""
    x = np.asarray(orig, dtype=np.float64)
    y = np.asarray(rep, dtype=np.float64)
    if (paired and x.size < 2) or x.size + y.size < 3:
        return None
    if paired:
        _, p = paired_t((x - y)[None, :])
        return num(p[0])
    from scipy.stats import ttest_ind

    if x.size == y.size and np.array_equal(x, y):
        return 1.0
    return num(ttest_ind(x, y).pvalue)


# --------------------------------------------------------------------------- the analysis
def _check_runs(store: StoreHandle, runs: dict[str, str]) -> None:
    for r in runs.values():
        store.run_id(r)  # NotFoundError with the closest names


def _rows_of(m: ScoreMatrix, run: str) -> np.ndarray:
    return m.values[m.runs.index(run)]


def _score_notes(mats: Sequence[ScoreMatrix], where: str) -> list[str]:
    notes = list(dict.fromkeys(n for mm in mats for n in mm.notes))
    m = mats[0]
    if m.dropped_topics:
        notes.append(
            f"{where}: {len(m.dropped_topics)} topic(s) left out because a run has no score on them "
            f"(missing=drop_topics): {', '.join(m.dropped_topics[:10])}{' ...' if len(m.dropped_topics) > 10 else ''}"
        )
    for mm in mats:
        if mm.filled:
            notes.append(f"{where}: {mm.filled} missing {mm.label} score(s) set to 0 (missing=zero)")
    return notes


def _orderings(
    store: StoreHandle, runs: dict[str, str], cut: int, p: float, order: str, missing: str
) -> tuple[dict, dict, dict, dict, list[str]]:
    ranked = orderings.rankings(store, list(runs.values()), cut, order)
    # the weights of the ranks the data has (a cut beyond the longest ranking adds a closed-form tail)
    weights = orderings.rbo_weights(p, cut, max((rk.longest for rk in ranked.values()), default=1))
    mean_ktu: dict[str, float | None] = {}
    mean_rbo: dict[str, float | None] = {}
    per: dict[str, dict[str, dict[str, float | None]]] = {"ktu": {}, "rbo": {}}
    topics_used: dict[str, list[str]] = {}
    notes: list[str] = []
    for side in SIDES:
        o, r = ranked[runs[side]], ranked[runs[f"rep_{side}"]]
        to, tr = set(o.docs), set(r.docs)
        only_o, only_r = sorted(to - tr), sorted(tr - to)
        if only_o or only_r:
            what = "; ".join(
                f"{len(ts)} only in {name} ({', '.join(ts[:5])}{' ...' if len(ts) > 5 else ''})"
                for ts, name in ((only_o, o.run), (only_r, r.run))
                if ts
            )
            if missing == "error":
                raise MetaError(
                    f"the {side} rankings do not have the same topics: {what}. Choose missing='drop_topics' "
                    f"(compare the topics both have) or 'zero' (KTU and RBO 0 on a topic one side lacks) "
                    f"(CLI: --missing drop-topics|zero)"
                )
            if missing == "drop_runs":
                raise MetaError("missing='drop_runs' does not apply to a reproduction (its four runs are fixed)")
        topics = sorted(to & tr) if missing == "drop_topics" else sorted(to | tr)
        if missing == "drop_topics" and (only_o or only_r):
            notes.append(f"KTU/RBO {side}: topics left out (missing=drop_topics): {what}")
        if missing == "zero" and (only_o or only_r):
            notes.append(f"KTU/RBO {side}: KTU and RBO are 0 on topics one ranking lacks (missing=zero): {what}")
        k_t: dict[str, float | None] = {}
        r_t: dict[str, float | None] = {}
        short = 0
        for t in topics:  # one vectorised computation per topic
            if t not in o.docs or t not in r.docs:
                k_t[t], r_t[t] = 0.0, 0.0
                continue
            tau, n = orderings.ktu(o.docs[t], r.docs[t])
            if len(o.docs[t]) != len(r.docs[t]):
                short += 1
            k_t[t] = num(tau)
            r_t[t] = orderings.rbo(o.docs[t], r.docs[t], p, cut, weights)
        if short:
            notes.append(
                f"KTU {side}: on {short} topic(s) the rankings have different lengths; KTU compares their "
                f"first min(length) positions (repro_eval cannot compare them)"
            )
        undefined = [t for t, v in k_t.items() if v is None]
        if undefined:
            notes.append(f"KTU {side}: undefined on {len(undefined)} topic(s) with fewer than 2 documents; left out")
        kv = [v for v in k_t.values() if v is not None]
        mean_ktu[side] = float(np.mean(kv)) if kv else None
        mean_rbo[side] = float(np.mean(list(r_t.values()))) if r_t else None
        per["ktu"][side], per["rbo"][side] = k_t, r_t
        topics_used[f"rankings_{side}"] = topics
    return mean_ktu, mean_rbo, per, topics_used, notes


def reproducibility(
    store: StoreHandle,
    qrels: str,
    baseline: str,
    advanced: str,
    rep_baseline: str,
    rep_advanced: str,
    metrics: str | Sequence[str] = ("AP",),
    *,
    rep_qrels: str | None = None,
    rbo_p: float = RBO_P,
    cut: int = DEPTH,
    order: str = "trec_eval",
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
) -> Reproduction:
    """Breuer et al.'s reproducibility measures of the pair (``baseline``, ``advanced``) on
    ``qrels`` and its reproduction (``rep_baseline``, ``rep_advanced``).

    ``rep_qrels``: None for reproducibility (the reproduction is evaluated with ``qrels``); the
    qrels of another collection for replicability (ER, ΔRI and unpaired t-tests only).
    ``metrics``: names as for ``evalstore eval`` (arithmetic means only), e.g. ``["AP", "nDCG@10"]``.
    ``rbo_p``: RBO's persistence (0.8; repro_eval's default 0.95). ``cut``: the rank cut of
    KTU and RBO (1000). ``order``: ``'trec_eval'`` (score desc, docno desc) or ``'repro_eval'``
    (file order, consecutive ties by docno desc; see :mod:`evalstore.repro.orderings`).
    ``missing``: ``'error'``, ``'drop_topics'`` or ``'zero'`` (module docstring).
    ``convention``, ``complete``, ``depth`` (trec_eval -M): how per-topic scores are computed, as
    ``evalstore eval`` (repro_eval's ``trim()`` also cuts the runs at 1000 before scoring them:
    ``depth=1000`` does the same for runs sorted by score).
    ``save``: store the analysis (``meta_runs`` kind ``'repro'``, rows in ``meta_repro`` and
    ``meta_repro_topics``). The values are repro_eval 0.5.0's; ``.to_dict()`` has its shape.
    """
    ms = list(dict.fromkeys(metric_names(metrics)))
    missing = normalise_missing(missing)
    if missing == "drop_runs":
        raise MetaError("missing='drop_runs' does not apply to a reproduction (its four runs are fixed)")
    p, cut, order = orderings.check_p(rbo_p), orderings.check_depth(cut), orderings.check_order(order)
    runs = {"baseline": baseline, "advanced": advanced, "rep_baseline": rep_baseline, "rep_advanced": rep_advanced}
    _check_runs(store, runs)
    for q in (qrels, rep_qrels):
        if q is not None:
            store.qrels_id(q)
    result, mats = _reproduction(store, qrels, rep_qrels, runs, ms, missing, dict(options=options, progress=progress))
    if result.kind == "reproducibility":
        ktu_d, rbo_d, per_topic, t_used, more = _orderings(store, runs, cut, p, order, missing)
        result.ktu, result.rbo, result.per_topic = ktu_d, rbo_d, per_topic
        result.topics.update(t_used)
        result.notes += more
    params = {
        "kind": result.kind, "rbo_p": p, "cut": cut, "order": order, "missing": missing, **options.as_dict(),
        "reference": "repro_eval 0.5.0",
        "t_test": "paired (ttest_rel)" if result.kind == "reproducibility" else "unpaired (ttest_ind, equal variances)",
    }  # fmt: skip
    an = Analysis("repro", params, None, _inputs(result, mats), _tables(result), {"reproduction": result})
    finish(store, an, save)
    result.analysis = an
    return result


def _reproduction(
    store: StoreHandle,
    qrels: str,
    rep_qrels: str | None,
    runs: dict[str, str],
    ms: list[str],
    missing: str,
    opts: dict[str, Any],
) -> tuple[Reproduction, list[ScoreMatrix]]:
    """The measures on the per-topic scores (the rankings' KTU and RBO are added by the caller), and
    the score matrices they were computed from."""
    paired = rep_qrels is None
    kind = "reproducibility" if paired else "replicability"
    orig, rep, topics, notes = _score_matrices(store, qrels, rep_qrels, runs, ms, missing, opts)
    arp, rmse_d, nrmse_d, er_d, dri_d, tt = _score_measures(ms, orig, rep, runs, paired)
    result = Reproduction(
        kind, qrels, rep_qrels, runs, ms, None, None, rmse_d if paired else None, nrmse_d if paired else None,
        er_d, dri_d, tt, arp, {}, topics, notes,
    )  # fmt: skip
    return result, list(orig if paired else (*orig, *rep))


def _inputs(result: Reproduction, mats: list[ScoreMatrix]) -> dict[str, Any]:
    """What the stored analysis read: the runs in their roles, the qrels sets, the score columns."""
    return {
        "runs": list(result.runs.values()),
        "roles": result.runs,
        "qrels": [result.qrels] + ([result.rep_qrels] if result.rep_qrels else []),
        "metrics": result.metrics,
        "columns": [mm.describe() | {"runs": list(mm.runs)} for mm in mats],
        "topics": result.topics,
        "notes": result.notes,
    }


def _score_matrices(
    store: StoreHandle,
    qrels: str,
    rep_qrels: str | None,
    runs: dict[str, str],
    ms: list[str],
    missing: str,
    opts: dict[str, Any],
) -> tuple[list[ScoreMatrix], list[ScoreMatrix], dict[str, list[str]], list[str]]:
    """The per-topic scores of the original and the reproduced runs (one matrix per metric; the
    same matrices for a reproduction, one per collection for a replication), the topics they
    cover and what the missing-topic rule did."""
    notes: list[str] = []
    topics: dict[str, list[str]] = {}
    if rep_qrels is None:
        mats = score_matrices(store, [Column(qrels, m) for m in ms], list(runs.values()), missing=missing, **opts)
        need_mean(mats, "Breuer et al.'s measures")
        orig = rep = mats
        notes += _score_notes(mats, "scores")
        topics["scores"] = list(mats[0].topics)
    else:
        orig = score_matrices(
            store, [Column(qrels, m) for m in ms], [runs["baseline"], runs["advanced"]], missing=missing, **opts
        )
        rep = score_matrices(
            store,
            [Column(rep_qrels, m) for m in ms],
            [runs["rep_baseline"], runs["rep_advanced"]],
            missing=missing,
            **opts,
        )
        need_mean(orig, "Breuer et al.'s measures")
        need_mean(rep, "Breuer et al.'s measures")
        notes += _score_notes(orig, "original scores") + _score_notes(rep, "replicated scores")
        topics["scores"], topics["rep_scores"] = list(orig[0].topics), list(rep[0].topics)
    for m in (*orig, *rep):
        if len(m.topics) == 0:
            raise MetaError(f"no topic has scores of every run for {m.label} on {m.qrels}")
    return orig, rep, topics, notes


def _score_measures(
    ms: list[str], orig: list[ScoreMatrix], rep: list[ScoreMatrix], runs: dict[str, str], paired: bool
) -> tuple[Any, ...]:
    """ARP, RMSE and nRMSE (reproductions only), ER, ΔRI and the t-tests, per metric."""
    arp: dict[str, dict[str, float | None]] = {role: {} for role in runs}
    rmse_d: dict[str, dict[str, float | None]] = {s: {} for s in SIDES}
    nrmse_d: dict[str, dict[str, float | None]] = {s: {} for s in SIDES}
    er_d: dict[str, float | None] = {}
    dri_d: dict[str, float | None] = {}
    tt: dict[str, dict[str, float | None]] = {s: {} for s in SIDES}
    for label, mo, mr in zip(ms, orig, rep):
        x = {s: _rows_of(mo, runs[s]) for s in SIDES}
        y = {s: _rows_of(mr, runs[f"rep_{s}"]) for s in SIDES}
        for s in SIDES:
            arp[s][label] = _mean(x[s])
            arp[f"rep_{s}"][label] = _mean(y[s])
            if paired:
                rmse_d[s][label] = rmse(x[s], y[s])
                nrmse_d[s][label] = nrmse(x[s], y[s])
            tt[s][label] = t_test_p(x[s], y[s], paired)
        er_d[label] = effect_ratio(x["baseline"], x["advanced"], y["baseline"], y["advanced"])
        dri_d[label] = delta_ri(x["baseline"], x["advanced"], y["baseline"], y["advanced"])
    return arp, rmse_d, nrmse_d, er_d, dri_d, tt


def _tables(r: Reproduction) -> dict[str, list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []

    def add(measure: str, side: str | None, metric: str | None, value: float | None, n: int | None) -> None:
        rows.append({"measure": measure, "side": side, "metric": metric, "value": value, "n_topics": n})

    n_scores = len(r.topics.get("scores", []))
    n_rep = len(r.topics.get("rep_scores", r.topics.get("scores", [])))
    for role, vals in r.arp.items():
        for metric, v in vals.items():
            add("arp", role, metric, v, n_rep if role.startswith("rep_") else n_scores)
    if r.ktu is not None and r.rbo is not None:
        for s in SIDES:
            n_rank = len(r.topics.get(f"rankings_{s}", []))
            add("ktu", s, None, r.ktu[s], n_rank)
            add("rbo", s, None, r.rbo[s], n_rank)
    for name, d in (("rmse", r.rmse), ("nrmse", r.nrmse)):
        if d is not None:
            for s in SIDES:
                for metric, v in d[s].items():
                    add(name, s, metric, v, n_scores)
    for metric in r.metrics:
        add("er", None, metric, r.er[metric], None)
        add("dri", None, metric, r.dri[metric], None)
    for s in SIDES:
        for metric, v in r.ttest[s].items():
            add("p_value", s, metric, v, None)
    topic_rows = [
        {"measure": measure, "side": s, "topic": t, "value": v}
        for measure, by_side in r.per_topic.items()
        for s, vals in by_side.items()
        for t, v in vals.items()
    ]
    return {"meta_repro": rows, "meta_repro_topics": topic_rows}

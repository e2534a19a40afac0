"""Reusability of a test collection: would a system that did not contribute to the pool be scored
and ranked fairly? (Zobel, SIGIR 1998; Buckley, Dimmick, Soboroff & Voorhees, IRJ 2007;
Voorhees, SIGIR 2001's leave-one-group-out test.)

For a qrels set, runs, their groups (:mod:`evalstore.pool.groups`: a participant's runs, or each
run alone) and a depth K, :func:`reusability`:

1. stores every group's leave-out set (:mod:`evalstore.pool.leave_out`): the qrels without the
   judged documents only that group's runs brought into the depth-K pool of the runs;
2. scores every run on the full qrels and on its own group's leave-out set (each evaluation in
   bulk, stored like any other; the scores of a leave-out set are those of a subsample);
3. per metric, compares the full leaderboard with the leave-out leaderboard, in which every run
   has its leave-out score: each run's change of mean and of rank (competition ranks of the means
   rounded to 12 decimals, 1 = best), Kendall's tau-b and tau_AP between the two leaderboards, the
   mean change, the largest drop of a mean and of a rank, and the runs whose rank changes; beside
   them each run's ``rank_alone``: its leave-out mean among the other runs' full means, where it
   would stand on the official leaderboard had its group not taken part.

Both leaderboards average over the topics of the full matrix (``missing=`` decides them as in the
other analyses); a topic left without judgments in a leave-out set scores 0 there (a note says so).
The analysis is stored (``meta_runs`` kind ``reusability``; ``meta_reusability``,
``meta_reusability_runs``, ``meta_reusability_groups``; migration 0017) unless ``save=False``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.aggregate import aggregate_rows
from ..base.arguments import metric_names, names
from ..errors import MetaError
from ..metrics.options import EvalOptions
from ..pool.groups import run_groups
from ..pool.leave_out import LeftOut, leave_out_subsamples
from ..stats.rank_correlation import kendall_tau_b
from ..stats.ranks import competition_ranks, tau_ap
from .common import finish, inputs_of
from .matrix import Column, ScoreMatrix, normalise_missing, score_matrices
from .persist import Analysis

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

TABLES = ("meta_reusability", "meta_reusability_runs", "meta_reusability_groups")


@dataclass
class Reusability:
    """The result of :func:`reusability`: ``summary`` (a ``meta_reusability`` row per metric),
    ``runs`` (``meta_reusability_runs`` rows, per metric best full rank first), ``groups`` (the
    :class:`~evalstore.pool.leave_out.LeftOut` of every group) and ``notes``."""

    qrels: str
    depth: int
    leave_one_out: str
    group_by: str | None
    summary: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    groups: list[LeftOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    analysis: Analysis | None = None

    @property
    def analysis_id(self) -> int | None:
        return self.analysis.analysis_id if self.analysis else None

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document: ``runs`` (per metric and run: ``run``, ``group``,
        ``mean_full``, ``mean_reduced``, ``rank_full``, ``rank_reduced``, ...), ``metrics`` (per
        metric: ``tau``, ``tau_ap``, the largest drops, ...) and ``groups``."""
        return {
            "qrels": self.qrels,
            "depth": self.depth,
            "leave_one_out": self.leave_one_out,
            "group_by": self.group_by,
            "metrics": {s["metric"]: {k: v for k, v in s.items() if k != "metric"} for s in self.summary},
            "runs": [_run_entry(r) for r in self.runs],
            "groups": [g.row() | {"runs": g.runs} for g in self.groups],
            "analysis_id": self.analysis_id,
        }


def _run_entry(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "left_out"}
    out["group"] = row["left_out"]
    full, reduced = row["mean_full"], row["mean_reduced"]
    out["mean_change"] = None if full is None or reduced is None else reduced - full
    out["rank_change"] = row["rank_reduced"] - row["rank_full"]
    return out


def reusability(
    store: StoreHandle,
    qrels: str,
    metrics: str | Sequence[str],
    runs: Sequence[str] | None = None,
    *,
    pool_depth: int = 10,
    leave_one_out: str = "groups",
    group_by: str | None = None,
    groups: str | os.PathLike | Mapping[str, str] | None = None,
    prefix: str | None = None,
    replace: bool = False,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
) -> Reusability:
    """Leave each group (``leave_one_out='groups'``: grouped by ``group_by``, a field of the runs'
    ir_metadata headers or, with ``groups`` (a file or ``{run: group}``), a column of that file) or
    each run (``leave_one_out='runs'``) out of the depth-``pool_depth`` pool of ``runs`` (all runs when
    None) and compare the leaderboards of ``metrics`` on ``qrels`` with and without (see the module
    docstring). The leave-out sets are stored as subsamples (``prefix``, ``replace`` as for
    :func:`evalstore.pool.leave_out.leave_out_subsamples`)."""
    chosen = metric_names(metrics)
    missing = normalise_missing(missing)
    run_list = names(runs, "run") if runs is not None else None
    full = score_matrices(store, [Column(qrels, m) for m in chosen], run_list, missing=missing, progress=progress,
                          options=options)  # fmt: skip
    if len(full[0].runs) < 2:
        raise MetaError(f"a reusability test needs at least 2 runs, got {len(full[0].runs)}")
    mapping = run_groups(store, full[0].runs, leave_one_out=leave_one_out, group_by=group_by, groups=groups)
    left = leave_out_subsamples(store, qrels, mapping, pool_depth, leave_one_out=leave_one_out, prefix=prefix,
                                replace=replace)  # fmt: skip
    reduced, notes = _reduced(store, full, left, progress, options)
    result = Reusability(qrels, pool_depth, leave_one_out, None if leave_one_out == "runs" else group_by, groups=left)
    result.notes = notes
    sub_of = {r: lo.qrels for lo in left for r in lo.runs}
    for mat, values in zip(full, reduced):
        summary, rows = compare(mat, values, mapping, sub_of)
        result.summary.append(summary)
        result.runs.extend(rows)
    params = {
        "qrels": qrels,
        "metrics": chosen,
        "depth": pool_depth,
        "leave_one_out": leave_one_out,
        "group_by": result.group_by,
        "groups_file": os.fspath(groups) if isinstance(groups, (str, os.PathLike)) else None,
        "missing": missing,
        **options.as_dict(),
    }
    inputs = inputs_of(full) | {
        "groups": mapping,
        "leave_out": [{"qrels": lo.qrels, "left_out": lo.group, "runs": lo.runs} for lo in left],
    }
    tables = {
        "meta_reusability": result.summary,
        "meta_reusability_runs": result.runs,
        "meta_reusability_groups": [lo.row() for lo in left],
    }
    result.analysis = finish(store, Analysis("reusability", params, None, inputs, tables), save)
    return result


def _reduced(
    store: StoreHandle, full: list[ScoreMatrix], left: list[LeftOut], progress: bool | None, options: EvalOptions
) -> tuple[list[np.ndarray], list[str]]:
    """Per metric, the runs x topics matrix of every run's scores on its own group's leave-out set,
    over the full matrix's runs and topics (a topic missing from a leave-out set scores 0)."""
    runs, topics = full[0].runs, full[0].topics
    out = [np.full((len(runs), len(topics)), np.nan) for _ in full]
    row = {r: i for i, r in enumerate(runs)}
    zeroed = 0
    for lo in left:
        cols = [Column(lo.qrels, m.label) for m in full]
        mats = score_matrices(store, cols, lo.runs, missing="zero", progress=progress, options=options)
        for k, mat in enumerate(mats):
            have = {t: j for j, t in enumerate(mat.topics)}
            where = np.array([have.get(t, -1) for t in topics], dtype=np.int64)
            idx = np.array([row[r] for r in mat.runs], dtype=np.int64)
            values = np.zeros((len(idx), len(topics)))
            present = where >= 0
            values[:, present] = mat.values[:, where[present]]
            out[k][idx] = values
            zeroed += int((~present).sum()) * len(idx)
    notes = []
    if zeroed:
        notes.append(
            f"{zeroed} (run, topic, metric) cells score 0: their topic has no judgment left in the leave-out set"
        )
    return out, notes


def compare(
    full: ScoreMatrix, reduced: np.ndarray, groups: Mapping[str, str], qrels_of: Mapping[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The full and the leave-out leaderboards of one metric: the ``meta_reusability`` row and the
    ``meta_reusability_runs`` rows (best full rank first, then by name)."""
    a = full.means()
    b = np.round(aggregate_rows(reduced, full.aggregate), 12)
    exact_a, exact_b = aggregate_rows(full.values, full.aggregate), aggregate_rows(reduced, full.aggregate)
    ra, rb = competition_ranks(a), competition_ranks(b)
    # each run's leave-out mean among the others' full means: 1 + the other runs above it
    alone = 1 + np.sum(a[None, :] > b[:, None], axis=1) - (a > b)
    order = sorted(range(len(full.runs)), key=lambda i: (int(ra[i]), full.runs[i]))
    rows = [
        {
            "metric": full.label,
            "run": full.runs[i],
            "left_out": groups[full.runs[i]],
            "qrels": qrels_of[full.runs[i]],
            "mean_full": _num(exact_a[i]),
            "mean_reduced": _num(exact_b[i]),
            "rank_full": int(ra[i]),
            "rank_reduced": int(rb[i]),
            "rank_alone": int(alone[i]),
        }
        for i in order
    ]
    drop = exact_a - exact_b
    rank_drop = rb - ra
    worst = int(np.nanargmax(drop)) if np.isfinite(drop).any() else None
    fell = int(np.argmax(rank_drop))
    summary = {
        "metric": full.label,
        "n_runs": len(full.runs),
        "n_topics": len(full.topics),
        "tau": _num(kendall_tau_b(a, b)),
        "tau_ap": _num(tau_ap(a, b)),
        "mean_change": _num(np.nanmean(exact_b - exact_a)),
        "max_drop": _num(drop[worst]) if worst is not None else None,
        "max_drop_run": full.runs[worst] if worst is not None and drop[worst] > 0 else None,
        "max_rank_drop": max(int(rank_drop[fell]), 0),
        "max_rank_drop_run": full.runs[fell] if rank_drop[fell] > 0 else None,
        "n_rank_changes": int(np.count_nonzero(ra != rb)),
    }
    return summary, rows


def _num(x: Any) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)

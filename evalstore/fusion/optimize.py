"""Choosing a fusion's weights (or its one parameter) on a qrels set, as ranx's
``optimize_fusion`` does: a grid search, every point scored by one metric's mean.

The grid is ranx's: weightings whose weights are multiples of ``step`` (default 0.1) summing to 1,
in the order of ``itertools.product`` (the first run's weight slowest); a parameter's grid is its
registry entry's (``rrf``: k = 10, 20, ..., 100; ``rbc``: phi = 0.01, ..., 0.99; ``gmnz``: gamma,
``logn_isr``: sigma = 0.01, ..., 1). Every point is fused and evaluated **at once**: one SQL
statement makes all the candidate runs (``cand`` tells them apart) and the metric engine evaluates
them together over that table (``rank_source``), so a grid of 66 weightings costs two statements,
not 66 evaluations. The best mean wins; among equal means the last point in grid order, as ranx's
``>=`` keeps it.

Two differences from ranx, on purpose: ranx keeps a weighting when the floating-point sum of its
rounded weights equals 1.0, which drops some (4 of the 66 weightings of three runs at step 0.1:
0.2 + 0.7 + 0.1 != 1.0 in floating point); here the weights are counted in steps, so every
weighting that sums to 1 is tried (the result says how many ranx would drop). ranx's RBC grid
ends at phi = 1, where every contribution is 0; here it ends at 0.99.

Choosing on a qrels set and reporting the score on the same set overstates the gain: the note
says so, and names a held-out set (other topics, or another year's qrels) as the way to report.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..base.aggregate import sql as aggregate_sql
from ..errors import FusionError
from ..metrics import engine
from ..metrics.gains import declared_gains
from ..metrics.options import EvalOptions
from ..metrics.ranked_list import drop as drop_ranked_list
from ..output.table import Table
from .compute import FusionWork
from .recipe import Recipe, plain

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

_serial = itertools.count(1)
#: Candidate rows (fusions x candidate documents) fused and evaluated per statement; a larger grid
#: is split into batches of this size.
BATCH_ROWS = 8_000_000
#: The largest grid searched (a smaller step or more runs would take too long to be useful).
MAX_CANDIDATES = 20_000


@dataclass
class Optimization:
    """A grid search: what was searched (``weights`` or a parameter's name), the candidates, the
    mean of the metric for each on the qrels set, and the one chosen."""

    metric: str
    qrels: str
    qrels_sha256: str
    searched: str
    step: float
    candidates: list[dict[str, Any]]
    means: list[float]
    chosen: int
    ranx_drops: int = 0

    @property
    def best(self) -> dict[str, Any]:
        return self.candidates[self.chosen]

    @property
    def score(self) -> float:
        return self.means[self.chosen]

    def choice_text(self) -> str:
        c = self.best
        if "weights" in c:
            return "weights " + ", ".join(f"{w:g}" for w in c["weights"])
        return ", ".join(f"{k} = {v:g}" for k, v in c["params"].items())

    def warning(self) -> str:
        return (
            f"the {self.searched} were chosen on {self.qrels!r} and {self.metric} = {self.score:.4f} is measured "
            "on the same set: that overstates the gain of the fusion. Report it on a held-out set: other topics "
            "(choose on one half, evaluate on the other), or another year's qrels (choose on one qrels set, "
            "evaluate on another)."
        )

    def record(self) -> dict[str, Any]:
        """What the fused run's recipe keeps of the search."""
        return {
            "metric": self.metric,
            "qrels": self.qrels,
            "qrels_sha256": self.qrels_sha256,
            "searched": self.searched,
            "step": self.step,
            "grid_size": len(self.candidates),
            "score": self.score,
        }

    def table(self, rows: int | None = 20) -> Table:
        """The best candidates, best first (ties in grid order, the chosen one first)."""
        order = sorted(range(len(self.candidates)), key=lambda i: (-_key(self.means[i]), i != self.chosen, -i))
        shown = order if rows is None else order[:rows]
        key = "weights" if self.searched == "weights" else self.searched
        out = []
        for rank, i in enumerate(shown, 1):
            c = self.candidates[i]
            v = ", ".join(f"{w:g}" for w in c["weights"]) if "weights" in c else f"{c['params'][key]:g}"
            out.append([rank, v, self.means[i], "chosen" if i == self.chosen else ""])
        notes = [f"chose {self.choice_text()}: {self.metric} = {self.score:.4f} on {self.qrels!r}", self.warning()]
        if self.ranx_drops:
            notes.append(
                f"{self.ranx_drops} of the {len(self.candidates)} weightings would not be tried by ranx (their "
                f"rounded weights do not add up to exactly 1.0 in floating point)"
            )
        return Table(
            ["rank", key, self.metric, ""],
            out,
            title=f"fusion grid on {self.qrels} ({len(self.candidates)} candidates)",
            notes=notes,
        )


def _key(v: float) -> float:
    return -math.inf if v is None or math.isnan(v) else v


def weight_grid(n_runs: int, step: float) -> tuple[list[tuple[float, ...]], int]:
    """The weightings of ``n_runs`` runs in multiples of ``step`` summing to 1, in ranx's order, and
    how many of them ranx's floating-point test would drop."""
    units = round(1 / step)
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise FusionError(f"the weight step must divide 1 (e.g. 0.1, 0.05, 0.25), not {step}")
    if math.comb(units + n_runs - 1, n_runs - 1) > MAX_CANDIDATES:
        raise FusionError(
            f"{n_runs} runs in steps of {step} make {math.comb(units + n_runs - 1, n_runs - 1)} weightings "
            f"(at most {MAX_CANDIDATES}); take a larger --step"
        )
    grid = [tuple(u / units for u in c) for c in _compositions(units, n_runs)]
    drops = sum(1 for g in grid if sum(g) != 1.0)  # ranx's test (the same rounded weights)
    return grid, drops


def decimals(step: float) -> int:
    """The decimals of ``step`` as written (ranx rounds its grids to them)."""
    text = repr(float(step)) if not float(step).is_integer() else str(int(step))
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Non-negative integer tuples of ``parts`` summing to ``total``, in lexicographic order."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def param_grid(first: float, last: float, step: float) -> list[float]:
    """``first, first + step, ..., last`` (rounded to the step's decimals, as ranx rounds)."""
    if step <= 0:
        raise FusionError(f"the step must be positive, not {step}")
    n = int(math.floor((last - first) / step + 1e-9)) + 1
    if n > MAX_CANDIDATES:
        raise FusionError(f"a grid of {n} values (at most {MAX_CANDIDATES}); take a larger --step")
    return [plain(round(first + i * step, decimals(step))) for i in range(n)]


def grid(recipe: Recipe, step: float | None) -> tuple[str, float, list[dict[str, Any]], int]:
    """What is searched, with which step, the candidates, and how many ranx would drop."""
    m = recipe.method
    if m.weighted:
        if recipe.weights is not None:
            raise FusionError("--optimize chooses the weights: leave --weights out")
        s = 0.1 if step is None else step
        weights, drops = weight_grid(len(recipe.runs), s)
        return "weights", s, [{"weights": w} for w in weights], drops
    free = [p for p in m.params if p.grid and p.name not in recipe.params]
    if not free:
        given = [p.name for p in m.params if p.grid]
        if given:
            raise FusionError(f"--optimize chooses {given[0]}: leave --param {given[0]}=... out")
        raise FusionError(
            f"{m.name} has nothing to choose (no weights, no parameter); --optimize applies to the weighted "
            f"methods (wsum, wmnz, mixed, w_bordafuse) and to rrf (k), rbc (phi), gmnz (gamma), logn_isr (sigma)"
        )
    p = free[0]
    assert p.grid is not None
    first, last, default_step = p.grid
    s = default_step if step is None else step
    values = [v for v in param_grid(first, last, s) if _in_range(p, v)]
    return p.name, s, [{"params": {p.name: v}} for v in values], 0


def _in_range(p, v: float) -> bool:
    try:
        p.check(v, "")
        return True
    except FusionError:
        return False


def search(
    store: StoreHandle, recipe: Recipe, work: FusionWork, metric: str, qrels: str, step: float | None
) -> Optimization:
    """Fuse every grid point, evaluate them all with ``metric`` on ``qrels``, choose the best."""
    qid = store.qrels_id(qrels)
    searched, s, candidates, drops = grid(recipe, step)
    inst = _one_metric(metric)
    per_cand = _rows_per_candidate(store, work, recipe)
    batch = max(1, BATCH_ROWS // max(per_cand, 1))
    means: list[float] = []
    for start in range(0, len(candidates), batch):
        part = candidates[start : start + batch]
        work.fuse(recipe, part)
        means += evaluate_candidates(store, work.rows(), len(part), inst, qid, qrels)
    best = max(range(len(means)), key=lambda i: (_key(means[i]), i))
    (sha,) = store.con.execute("SELECT sha256 FROM qrels_meta WHERE qrels_id = ?", [qid]).fetchall()[0]
    return Optimization(inst.display, qrels, sha, searched, s, candidates, means, best, drops)


def _one_metric(metric: str):
    instances = engine.resolve_metrics(metric)
    if len(instances) != 1:
        raise FusionError(f"--optimize takes one metric, not {len(instances)} ({metric!r})")
    inst = instances[0]
    if "run_meta" in inst.spec.block.reads:
        raise FusionError(f"{inst.display} reads the stored run's record; choose the fusion with another metric")
    return inst


def _rows_per_candidate(store: StoreHandle, work: FusionWork, recipe: Recipe) -> int:
    """The documents one candidate fusion has (all topics): the size of a batch's share."""
    rank = "submitted_rank" if recipe.ranks == "submitted" else "rank"
    depth = recipe.depth if recipe.depth is not None else 1 << 62
    (n,) = store.con.execute(
        f"""SELECT count(*) FROM (SELECT DISTINCT r.topic, r.doc FROM run_row_data r
            JOIN {work.inputs_table} i USING (run_id) WHERE r.{rank} <= ?)""",
        [depth],
    ).fetchall()[0]
    return int(n)


def evaluate_candidates(
    store: StoreHandle, rows: str, n: int, inst, qid: int, qrels: str, options: Any = None
) -> list[float]:
    """The mean of ``inst`` on the qrels set ``qid`` of each candidate fusion of ``rows`` (a query
    giving cand, topic, doc, score, rank), by the engine that evaluates stored runs, in one pass."""
    con = store.con
    opts = options or EvalOptions()
    declared = declared_gains(con, [qid])
    pairs = engine.plan_pairs([qid], [inst], opts, declared)
    units = engine.group_units(pairs, [qid], [inst])
    out = f"_fusion_scores_{next(_serial)}"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {out} "
        "(qrels_id INTEGER, run_id INTEGER, topic VARCHAR, key VARCHAR, value DOUBLE)"
    )
    try:
        engine.compute(
            con,
            units,
            list(range(n)),
            opts,
            out,
            qrels_names={qid: qrels},
            rank_source=f"SELECT cand AS run_id, topic, doc, rank, score FROM ({rows})",
        )
        means = dict(
            con.execute(
                f"SELECT run_id, {aggregate_sql(inst.spec.aggregate, 'value')} FROM {out} GROUP BY run_id"
            ).fetchall()
        )
    finally:
        drop_ranked_list(con)
        con.execute(f"DROP TABLE IF EXISTS {out}")
    return [float(means[c]) if means.get(c) is not None else math.nan for c in range(n)]

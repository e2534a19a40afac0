"""evalstore's fusion next to ranx's ``fuse`` on TREC DL 2019 runs: every method x normalisation.

Three DL 2019 passage runs (a BM25 run, a BERT re-ranker, a BERT re-ranker over BM25+RM3) are
fused by evalstore (``Store.fuse``, SQL) and by ranx (``ranx.fuse``) and the fused scores compared
document by document:

* ``diff``: the largest |evalstore - ranx| over every (topic, document), with ranx reading the
  files itself (``Run.from_file``): ranx orders tied scores by NumPy's argsort (quicksort, not
  stable), evalstore by docno descending, so a method or normalisation that reads positions (rrf,
  isr, log_isr, logn_isr, bordafuse, w_bordafuse, rbc; rank, borda) may give a tied document
  another position, hence another score;
* ``tied``: the documents whose scores differ, and whether every one of them is a tied document of
  an input run (the ties explain the difference);
* ``same order``: the largest difference when ranx is handed the runs in evalstore's order (its
  Run's dictionaries filled in that order; ranx's fusion reads that order as it is). What remains
  is arithmetic: NumPy's pairwise sums in zmuv's mean and standard deviation.

Used by tests/fusion/test_ranx_dl19.py; ``python tests/ranx_fusion_kit.py`` prints the table
(Markdown) for the closing note. (Timings: bench/bench_fusion.py; here ranx's first call of each
function includes numba's compilation.)
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import evalstore
from evalstore.errors import FusionError
from evalstore.fusion import METHODS, NORMALIZATIONS
from evalstore.fusion.registry import RANKS

RUNS = ("bm25base_p", "idst_bert_p1", "p_exp_rm3_bert")
WEIGHTS = (0.5, 0.3, 0.2)
PARAMS = {"rbc": {"phi": 0.8}, "gmnz": {"gamma": 0.5}, "logn_isr": {"sigma": 0.01}, "rrf": {"k": 60}}
POSITIONAL_NORMS = {"rank", "borda"}


@dataclass
class Row:
    method: str
    norm: str
    n_docs: int = 0
    diff: float = math.nan
    rel: float = math.nan
    n_differ: int = 0
    tied_explained: bool = True
    same_order: float = math.nan
    refused: str = ""
    seconds: float = math.nan
    ranx_seconds: float = math.nan

    @property
    def positional(self) -> bool:
        return METHODS[self.method].reads == RANKS or self.norm in POSITIONAL_NORMS


def combos() -> list[tuple[str, str]]:
    out = []
    for m in METHODS.values():
        for n in NORMALIZATIONS:
            out.append((m.name, n))
    return out


class Kit:
    """The three runs in an evalstore store and as ranx Runs (ranx's reading, evalstore's order)."""

    def __init__(self, data: Path) -> None:
        from ranx import Run

        self.store = evalstore.open(":memory:")
        files = [data / "runs" / f"{r}.run.gz" for r in RUNS]
        self.store.ingest_run(files, progress=False)
        self.ranx_own = [Run.from_file(str(f), kind="gz") for f in files]
        self.ranx_ours = [self._in_our_order(r) for r in RUNS]
        self.tied = self._tied()

    def _in_our_order(self, run: str):
        from numba import types
        from numba.typed import Dict as TypedDict
        from ranx import Run

        rows = self.store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ? ORDER BY topic, rank", [run]).rows
        outer = TypedDict.empty(
            key_type=types.unicode_type, value_type=types.DictType(types.unicode_type, types.float64)
        )
        for t, d, s in rows:
            if t not in outer:
                outer[t] = TypedDict.empty(key_type=types.unicode_type, value_type=types.float64)
            outer[t][d] = s
        r = Run()
        r.run = outer
        r.sorted = True
        r.name = run
        return r

    def _tied(self) -> set[tuple[str, str]]:
        """(topic, doc) of the documents that share their score with another in some input run."""
        rows = self.store.sql(
            """SELECT topic, doc FROM run_rows WHERE run IN (SELECT unnest(?))
               QUALIFY count(*) OVER (PARTITION BY run, topic, score) > 1""",
            [list(RUNS)],
        ).rows
        return {(t, d) for t, d in rows}

    def ours(self, method: str, norm: str) -> tuple[dict[tuple[str, str], float], float]:
        name = f"{method}|{norm}"
        t0 = time.perf_counter()
        self.store.fuse(
            list(RUNS), method, name=name, norm=norm, params=PARAMS.get(method),
            weights=WEIGHTS if METHODS[method].weighted else None,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
        rows = self.store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [name]).rows
        return {(t, d): s for t, d, s in rows}, seconds

    def ranx(self, method: str, norm: str, runs) -> tuple[dict[tuple[str, str], float], float]:
        from ranx import fuse

        params = dict(PARAMS.get(method, {}))
        if METHODS[method].weighted:
            params["weights"] = list(WEIGHTS)
        t0 = time.perf_counter()
        fused = fuse(runs, norm=None if norm == "none" else norm, method=method, params=params)
        seconds = time.perf_counter() - t0
        return {(t, d): float(s) for t, docs in fused.run.items() for d, s in docs.items()}, seconds

    def compare(self, method: str, norm: str) -> Row:
        row = Row(method, norm)
        try:
            ours, row.seconds = self.ours(method, norm)
        except FusionError as e:
            row.refused = str(e).split(";")[0].split(":")[0]
            return row
        theirs, row.ranx_seconds = self.ranx(method, norm, self.ranx_own)
        same, _ = self.ranx(method, norm, self.ranx_ours)
        if set(ours) != set(theirs) or set(ours) != set(same):
            raise AssertionError(f"{method} {norm}: the fused documents differ from ranx's")
        row.n_docs = len(ours)
        diffs = {k: abs(ours[k] - theirs[k]) for k in ours}
        row.diff = max(diffs.values())
        row.rel = max(d / max(abs(theirs[k]), 1e-300) for k, d in diffs.items())
        differ = {k for k, d in diffs.items() if d > 1e-12 * max(1.0, abs(theirs[k]))}
        row.n_differ = len(differ)
        row.tied_explained = differ <= self.tied
        row.same_order = max(abs(ours[k] - same[k]) for k in ours)
        return row


def table(rows: list[Row]) -> str:
    head = (
        "| method | norm | docs | largest diff vs ranx | docs that differ | all tied in an input run | "
        "largest diff, ranx given evalstore's tie order |\n"
        "|---|---|---:|---:|---:|---|---:|"
    )
    out = [head]
    for r in rows:
        if r.refused:
            out.append(f"| {r.method} | {r.norm} | | refused: {r.refused} | | | |")
            continue
        tied = "n/a" if not r.n_differ else ("yes" if r.tied_explained else "**no**")
        out.append(
            f"| {r.method} | {r.norm} | {r.n_docs} | {r.diff:.3g} | {r.n_differ} | {tied} | {r.same_order:.3g} |"
        )
    return "\n".join(out)


def main() -> int:
    root = Path(__file__).resolve().parent
    sys.path.insert(0, str(root))
    from support import DATA_DIR

    kit = Kit(DATA_DIR / "trec-dl-2019-passage")
    rows = []
    for method, norm in combos():
        rows.append(kit.compare(method, norm))
        print(f"{method} {norm} done", file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

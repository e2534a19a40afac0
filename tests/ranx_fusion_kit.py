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

Used by tests/conformance/test_ranx_fusion_dl19.py; ``python tests/ranx_fusion_kit.py`` prints the table
(Markdown) for the closing note. (Timings: bench/bench_fusion.py; here ranx's first call of each
function includes numba's compilation.)

Cost: ranx's ``fuse(runs, norm, method)`` is ``method(norm(runs))``, and neither step changes its
input, so the kit normalises each input order once per normalisation (ranx's ``borda`` takes
seconds) and hands ranx's fusion the normalised runs with ``norm=None``: the same calls on the same
values as ``fuse(runs, norm=...)``. Fused runs are compared as arrays keyed by (topic, document),
read out of ranx's numba dictionaries by a compiled loop and out of the store by one query (TREC DL's
topic and passage ids are integers; a non-integer id fails loudly), not as Python dictionaries.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
        (canonical,) = self.store.con.execute(
            """SELECT bool_and(CAST(TRY_CAST(topic AS BIGINT) AS VARCHAR) IS NOT DISTINCT FROM topic
                      AND CAST(TRY_CAST(doc AS BIGINT) AS VARCHAR) IS NOT DISTINCT FROM doc)
               FROM run_rows WHERE run IN (SELECT unnest(?))""",
            [list(RUNS)],
        ).fetchone()
        assert canonical, "the comparison keys documents by integer ids: every id must be one, as written"
        self.tied = self._tied()
        self._normalized: dict[tuple[str, str], list] = {}

    def _in_our_order(self, run: str):
        from ranx import Run
        from ranx_arrays import typed_run, unicode_list

        cols = self.store.con.execute(
            "SELECT topic, doc, score FROM run_rows WHERE run = ? ORDER BY topic, rank", [run]
        ).fetchnumpy()
        scores = np.asarray(cols["score"], dtype=np.float64)
        r = Run()
        r.run = typed_run(unicode_list(cols["topic"].tolist()), unicode_list(cols["doc"].tolist()), scores)
        r.sorted = True
        r.name = run
        return r

    def _tied(self) -> np.ndarray:
        """The keys (:func:`_key`) of the documents that share their score with another in some input run."""
        cols = self.store.con.execute(
            """SELECT CAST(topic AS BIGINT) AS topic, CAST(doc AS BIGINT) AS doc FROM run_rows
               WHERE run IN (SELECT unnest(?))
               QUALIFY count(*) OVER (PARTITION BY run, topic, score) > 1""",
            [list(RUNS)],
        ).fetchnumpy()
        return np.unique(_key(cols["topic"], cols["doc"]))

    def ours(self, method: str, norm: str) -> tuple[Fused, float]:
        name = f"{method}|{norm}"
        t0 = time.perf_counter()
        self.store.fuse(
            list(RUNS), method, name=name, norm=norm, params=PARAMS.get(method),
            weights=WEIGHTS if METHODS[method].weighted else None,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
        cols = self.store.con.execute(
            "SELECT CAST(topic AS BIGINT) AS topic, CAST(doc AS BIGINT) AS doc, score FROM run_rows WHERE run = ?",
            [name],
        ).fetchnumpy()
        return Fused.of(cols["topic"], cols["doc"], np.asarray(cols["score"], dtype=np.float64)), seconds

    def normalized(self, norm: str, runs: list) -> list:
        """ranx's normalisation of ``runs`` (``self.ranx_own`` or ``self.ranx_ours``), made once."""
        from ranx.normalization import norm_switch

        key = (norm, "own" if runs is self.ranx_own else "ours")
        if key not in self._normalized:
            if norm == "none":
                self._normalized[key] = runs
            elif norm == "borda":
                self._normalized[key] = norm_switch(norm)(runs)
            else:
                self._normalized[key] = [norm_switch(norm)(r) for r in runs]
        return self._normalized[key]

    def ranx(self, method: str, norm: str, runs) -> tuple[Fused, float]:
        """ranx's ``fuse(runs, norm=norm, method=method)``, its normalisation taken from :meth:`normalized`."""
        from ranx import fuse
        from ranx_arrays import flatten

        params = dict(PARAMS.get(method, {}))
        if METHODS[method].weighted:
            params["weights"] = list(WEIGHTS)
        t0 = time.perf_counter()
        fused = fuse(self.normalized(norm, runs), norm=None, method=method, params=params)
        seconds = time.perf_counter() - t0
        return Fused.of(*flatten(fused.run)), seconds

    def compare(self, method: str, norm: str) -> Row:
        row = Row(method, norm)
        try:
            ours, row.seconds = self.ours(method, norm)
        except FusionError as e:
            row.refused = str(e).split(";")[0].split(":")[0]
            return row
        theirs, row.ranx_seconds = self.ranx(method, norm, self.ranx_own)
        same, _ = self.ranx(method, norm, self.ranx_ours)
        if not (np.array_equal(ours.keys, theirs.keys) and np.array_equal(ours.keys, same.keys)):
            raise AssertionError(f"{method} {norm}: the fused documents differ from ranx's")
        row.n_docs = len(ours.keys)
        diffs = np.abs(ours.scores - theirs.scores)
        row.diff = float(diffs.max())
        row.rel = float((diffs / np.maximum(np.abs(theirs.scores), 1e-300)).max())
        differ = ours.keys[diffs > 1e-12 * np.maximum(1.0, np.abs(theirs.scores))]
        row.n_differ = len(differ)
        row.tied_explained = bool(np.isin(differ, self.tied).all())
        row.same_order = float(np.abs(ours.scores - same.scores).max())
        return row


@dataclass
class Fused:
    """A fused run as arrays: ``keys`` (:func:`_key` of topic and document), sorted, and their scores."""

    keys: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, topics: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> Fused:
        keys = _key(topics, docs)
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        if len(keys) and (np.diff(keys) == 0).any():
            raise AssertionError("a (topic, document) appears twice in a fused run")
        return cls(keys, scores[order])


def _key(topics: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """One int64 per (topic, document): TREC DL's topic ids (< 2^31) and passage ids (< 2^32)."""
    topics, docs = np.asarray(topics, dtype=np.int64), np.asarray(docs, dtype=np.int64)
    assert (topics >= 0).all() and (topics < 1 << 31).all() and (docs >= 0).all() and (docs < 1 << 32).all()
    return (topics << 32) | docs


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

#!/usr/bin/env python3
"""evalstore's fusion (SQL over stored runs) next to ranx's ``fuse`` and ``optimize_fusion``.

For each shape the same runs are loaded once into each tool (an evalstore store in memory; ranx
Runs), untimed; then each operation is timed in turn, evalstore then ranx, ``--repeat`` times
(interleaved, so a change of the machine's speed hits both), after one untimed warm-up of each
(numba compiles ranx's functions on first use; its on-disk cache is used when filled):

* ``fuse <method>``: evalstore ``Store.fuse`` (fused, stored with its recipe and header, sha256
  taken) vs ranx ``fuse`` (a Run in memory);
* ``optimize wsum``: evalstore ``Store.fuse(..., optimize=metric)`` (the 66 weightings of three runs
  fused in one statement, evaluated in one pass, the best stored) vs ranx ``optimize_fusion``
  (66 fusions and evaluations in a Python loop).

Wall seconds (min / median / max) and CPU seconds (user + sys of the process, median), and the
ratio of the medians (evalstore / ranx). The fused scores of both are compared (largest absolute
difference; the methods that read positions differ on tied documents, see docs/fusion.md).

Shapes: ``dl19`` (three TREC DL 2019 passage runs, 43 topics x 1000; ../shared, skipped when
absent) and ``synth`` (5 runs x 200 topics x 1000, ../shared/tools/gen_synth.py, seed 0; without
bordafuse, which ranx computes in time quadratic in the candidates of a topic).

    python bench/bench_fusion.py [--shapes dl19,synth] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
DL19 = SHARED / "data" / "trec-dl-2019-passage"
METHODS = (("rrf", None, None), ("wsum", "min-max", "w"), ("mnz", "zmuv", None), ("bordafuse", None, None))


def shapes(names: list[str], work: Path) -> dict[str, tuple[Path | None, list[Path]]]:
    out: dict[str, tuple[Path | None, list[Path]]] = {}
    if "dl19" in names:
        if DL19.exists():
            runs = [DL19 / "runs" / f"{r}.run.gz" for r in ("bm25base_p", "idst_bert_p1", "p_exp_rm3_bert")]
            out["dl19"] = (DL19 / "qrels.txt", runs)
        else:
            print(f"dl19: {DL19} is absent; skipped", file=sys.stderr)
    if "synth" in names:
        folder = work / "synth_5x200x1000"
        if not (folder / "qrels.txt").exists():
            subprocess.run(
                [sys.executable, str(SHARED / "tools" / "gen_synth.py"), "--out", str(folder), "--runs", "5",
                 "--topics", "200", "--depth", "1000", "--seed", "0", "--quiet"],
                check=True,
            )  # fmt: skip
        out["synth"] = (folder / "qrels.txt", sorted((folder / "runs").glob("*.txt")))
    return out


def timed(fn) -> tuple[float, float, object]:
    c0, t0 = time.process_time(), time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, time.process_time() - c0, value


def operations(store, names, ranx_runs, qrels, skip: tuple[str, ...] = ()) -> list:
    """``(label, evalstore's call, ranx's call, the fused run's name or None)`` of one shape."""
    from ranx import fuse, optimize_fusion

    ops = []
    for method, norm, weighted in METHODS:
        if method in skip:
            continue
        w = [round(1 / len(names), 3)] * len(names) if weighted else None
        params = {"weights": w} if w else {}

        def ours(method=method, norm=norm, w=w):
            return store.fuse(names, method, name=method, norm=norm, weights=w, replace=True)

        def theirs(method=method, norm=norm, params=params):
            return fuse(ranx_runs, norm=norm, method=method, params=params)

        ops.append((f"fuse {method}" + (f" ({norm})" if norm else ""), ours, theirs, method))

    def opt_ours():
        return store.fuse(names[:3], "wsum", name="opt", optimize="nDCG@10", qrels="q", replace=True)

    def opt_theirs():
        return optimize_fusion(
            qrels, ranx_runs[:3], norm="min-max", method="wsum", metric="ndcg@10", show_progress=False
        )

    ops.append(("optimize wsum, 3 runs, 66 weightings", opt_ours, opt_theirs, None))
    return ops


def cell(xs) -> tuple[str, float]:
    walls = sorted(x[0] for x in xs)
    return f"{walls[0]:.3f} / {statistics.median(walls):.3f} / {walls[-1]:.3f}", statistics.median(x[1] for x in xs)


def bench_shape(shape: str, qrels_path: Path, files: list[Path], repeat: int) -> None:
    from ranx import Qrels, Run

    import evalstore

    store = evalstore.open(":memory:")
    store.ingest_qrels(qrels_path, name="q", progress=False)
    names = [r.name for r in store.ingest_run(files, progress=False)]
    ranx_runs = [Run.from_file(str(f), kind="gz" if f.suffix == ".gz" else "trec") for f in files]
    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    # ranx's bordafuse looks every candidate up in a list (quadratic): 26 s on dl19, far more on synth
    skip = ("bordafuse",) if shape == "synth" else ()
    for label, ours, theirs, method in operations(store, names, ranx_runs, qrels, skip):
        ours()
        theirs()  # warm-up (numba)
        a, b = [], []
        for _ in range(repeat):
            a.append(timed(ours))
            b.append(timed(theirs))
        diff = ""
        if method is not None:
            rows = store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [method]).rows
            got = {(t, d): s for t, d, s in rows}
            ref = {(t, d): float(s) for t, docs in b[-1][2].run.items() for d, s in docs.items()}
            diff = f"{max(abs(got[k] - ref[k]) for k in ref):.3g}" if set(got) == set(ref) else "documents differ"
        (wa, ca), (wb, cb) = cell(a), cell(b)
        ratio = statistics.median(x[0] for x in a) / statistics.median(x[0] for x in b)
        print(f"| {shape} | {label} | {wa} | {ca:.2f} | {wb} | {cb:.2f} | {ratio:.2f} | {diff} |", flush=True)
    store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="dl19,synth")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    args = ap.parse_args()
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    print("| shape | operation | evalstore wall s (min/med/max) | cpu s | ranx wall s (min/med/max) | cpu s | "
          "ratio (median wall) | largest diff |")  # fmt: skip
    print("|---|---|---|---:|---|---:|---:|---:|")
    for shape, (qrels_path, files) in shapes(args.shapes.split(","), work).items():
        assert qrels_path is not None
        bench_shape(shape, qrels_path, files, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

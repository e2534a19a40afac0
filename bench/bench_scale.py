#!/usr/bin/env python3
"""Scale benchmark: ingest and evaluate growing synthetic collections into a store file, each
phase in its own process, reporting time, peak RSS and the cost per run line.

    python bench/bench_scale.py [--runs 10,100,1000] [--memory-limit default|none|2GB] [--json OUT]
                                [--work-dir DIR] [--repeat-eval]

The collection is ``../shared/tools/gen_synth.py --runs 1000 --topics 50 --depth 1000 --gz``
(50 M run lines, generated once into ``--work-dir``); the sizes 10 and 100 are the first runs of
it (sorted by name). Phases, each a fresh Python process on the same store file:

* ``ingest``: ``evalstore.open(db)``, ingest the qrels and the runs (one call);
* ``eval``: evaluate every run with seven measures (AP, P@10, nDCG, nDCG@10, RR, Bpref, R@1000),
  saving the per-topic scores;
* ``again`` (with ``--repeat-eval``): the same evaluation again (reuses the stored scores);
* ``add1``: ingest one more run, then evaluate all runs (computes only the new run's cells);
* ``one``: evaluate that one run alone (``--recompute``), the reference for ``add1``.

``--memory-limit``: ``default`` (the store's default budget), ``none`` (DuckDB's own default, 80 %
of RAM) or a size. Peak RSS is the child's VmHWM (ru_maxrss), interpreter and libraries included.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
GEN_SYNTH = SHARED / "tools" / "gen_synth.py"
MEASURES = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "R@1000"]


def collection(work: Path, runs: int = 1000) -> Path:
    out = work / f"synth-r{runs}-t50-d1000-gz"
    if not (out / "manifest.json").exists():
        print(f"generating {out} ...", flush=True)
        subprocess.run(
            [sys.executable, str(GEN_SYNTH), "--out", str(out), "--runs", str(runs), "--topics", "50"]
            + ["--depth", "1000", "--gz", "--quiet"],
            check=True,
        )
    return out


def child(args: dict) -> dict:
    """One phase, in this process; returns its measurements."""
    t0 = time.perf_counter()
    import evalstore

    limit = args["memory_limit"]
    kw = {} if limit == "default" else {"memory_limit": None if limit == "none" else limit}
    if limit == "none":
        kw["memory_limit"] = "80%"  # DuckDB's own default
    store = evalstore.open(args["db"], **kw)
    t_import = time.perf_counter() - t0
    out: dict = {"import": t_import}
    t1 = time.perf_counter()
    phase = args["phase"]
    if phase == "ingest":
        store.ingest_qrels(args["qrels"], name="qrels", progress=False)
        store.ingest_run(args["runs"], name_from="file", progress=False)
    elif phase == "add1":
        out["added"] = store.ingest_run(args["runs"], name_from="file", progress=False)[0].name
        t_ing = time.perf_counter()
        res = store.evaluate("qrels", None, MEASURES, progress=False)
        out["add1_ingest"] = t_ing - t1
        out["reused"], out["computed"] = res.reused, res.computed
    elif phase == "one":
        res = store.evaluate("qrels", args["run_names"], MEASURES, progress=False, recompute=True)
        out["computed"] = res.computed
    else:
        res = store.evaluate("qrels", None, MEASURES, progress=False)
        out["reused"], out["computed"] = res.reused, res.computed
    out["seconds"] = time.perf_counter() - t1
    store.close()
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_phase(args: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(args, f)
    try:
        p = subprocess.run([sys.executable, __file__, "--child", f.name], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise SystemExit(f"phase {args['phase']} failed:\n{p.stderr[-3000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(f.name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default="10,100,1000")
    ap.add_argument("--memory-limit", default="default")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--repeat-eval", action="store_true", help="also time a second evaluation and add1/one")
    ap.add_argument("--json", help="write the measurements to this JSON file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        with open(a.child) as f:
            print(json.dumps(child(json.load(f))))
        return 0
    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    col = collection(work)
    all_runs = sorted(str(p) for p in (col / "runs").glob("*.txt.gz"))
    qrels = str(next(col.glob("qrels.txt*")))
    records = []
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; memory limit: {a.memory_limit}")
    print(f"{'runs':>5} {'lines':>6} {'phase':<7} {'seconds':>8} {'us/line':>8} {'peak MB':>8}  note")
    for n in [int(x) for x in a.runs.split(",")]:
        db = str(work / f"scale-{n}.duckdb")
        for suffix in ("", ".wal"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        lines = n * 50 * 1000
        base = {"db": db, "qrels": qrels, "memory_limit": a.memory_limit}
        phases = [("ingest", {"runs": all_runs[:n]}), ("eval", {})]
        if a.repeat_eval:
            extra = all_runs[n] if n < len(all_runs) else str(work / "extra-run.txt.gz")
            if n >= len(all_runs):  # no run left: a copy of the first under another name
                shutil.copyfile(all_runs[0], extra)
            phases += [("again", {}), ("add1", {"runs": [extra]}), ("one", {})]
        added = None
        for phase, more in phases:
            if phase == "one":
                more = {"run_names": [added]}
            r = run_phase({**base, **more, "phase": phase})
            added = r.get("added", added)
            per_line = r["seconds"] / lines * 1e6 if phase in ("ingest", "eval") else float("nan")
            note = ""
            if "reused" in r:
                note = f"reused {r['reused']}, computed {r['computed']}"
            row = f"{n:>5} {lines / 1e6:>5.1f}M {phase:<7} {r['seconds']:>8.2f} {per_line:>8.3f} {r['peak_mb']:>8.0f}"
            print(f"{row}  {note}")
            records.append({"runs": n, "lines": lines, "phase": phase, **r})
        os.unlink(db)
    if a.json:
        Path(a.json).write_text(json.dumps({"memory_limit": a.memory_limit, "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

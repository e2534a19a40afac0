#!/usr/bin/env python3
"""Whole commands, as a user times them, interleaved with pytrec_eval doing the same job.

    python bench/bench_cli.py [--collection synth|dl19|all] [--repeat 5] [--work-dir DIR] [--json OUT]

Paths (each repetition runs every command once, in turn, so that a drift of the machine's speed
hits all alike; each command is a fresh process):

* ``one-shot``: ``evalstore eval QRELS RUN... -m AP -m P@10 -m nDCG -m nDCG@10 -m RR -m Bpref -m
  R@1000`` (no store) against ``pytrec_eval`` doing the same in a script of its own (its
  ``parse_qrel`` / ``parse_run``, one ``RelevanceEvaluator``, runs streamed one at a time, the
  means printed): the interpreter's start, the imports and the output included on both sides;
* ``file store``: ``evalstore ingest qrels``, ``evalstore ingest run`` (all runs) and ``evalstore
  eval`` on a new store file, three commands summed, against the same pytrec_eval script;
* ``start-up``: ``evalstore --version`` and ``evalstore --help``.

For each command: wall seconds (a monotonic clock around the child), CPU seconds (user + system of
the child, from ``wait4``) and peak RSS (the child's ``ru_maxrss``; the parent stays small, so it
is the child's own), as min / median / max over the repetitions, and the ratios of the medians to
pytrec_eval's (wall and CPU). The means of both tools are compared (the same 1e-4 agreement as
bench_trec.py); a disagreement exits with status 1. The machine's load average is printed at the
start and at the end: on a shared machine read CPU seconds beside wall.

Collections: as bench_trec.py (``synth``: 100 runs x 50 topics x 1000 docs, 5 M lines, generated
once into the work dir; ``dl19``: the 37 TREC DL 2019 passage runs, gzipped).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_trec import MEASURES, dl19_collection, run_name, synth_collection  # noqa: E402

PYTREC_SCRIPT = r"""
import gzip, sys
import pytrec_eval
KEYS = {keys!r}
def open_text(p):
    with open(p, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(p, "rt") if gz else open(p)
with open_text(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, set(KEYS.values()))
for path in sys.argv[2:]:
    with open_text(path) as f:
        run = pytrec_eval.parse_run(f)
    res = ev.evaluate(run)
    print(path, len(res), *(f"{{m}}={{sum(v[k] for v in res.values()) / len(res):.6f}}" for m, k in KEYS.items()))
"""


def evalstore_cmd() -> list[str]:
    exe = shutil.which("evalstore", path=os.path.dirname(sys.executable)) or shutil.which("evalstore")
    return [exe] if exe else [sys.executable, "-m", "evalstore"]


def timed(cmd: list[str], out: Path | None = None) -> dict:
    """Run ``cmd`` as a child; its wall seconds, CPU seconds and peak RSS (MB)."""
    stdout = open(out, "w") if out else subprocess.DEVNULL  # noqa: SIM115
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    finally:
        if out:
            stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}): {err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024}


def summed(parts: list[dict]) -> dict:
    return {
        "wall": sum(p["wall"] for p in parts),
        "cpu": sum(p["cpu"] for p in parts),
        "peak_mb": max(p["peak_mb"] for p in parts),
        "parts": parts,
    }


def evalstore_means(path: Path) -> dict[str, dict[str, float]]:
    """The means of ``evalstore eval`` output (the leaderboard table)."""
    lines = path.read_text().splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["run"])
    cols = lines[head].split()
    out = {}
    for ln in lines[head + 1 :]:
        f = ln.split()
        if len(f) != len(cols) or f[0].startswith("-"):
            continue
        out[f[0]] = {MEASURES_BY_ES[c]: float(v) for c, v in zip(cols, f) if c in MEASURES_BY_ES}
    return out


MEASURES_BY_ES = {v[0]: k for k, v in MEASURES.items()}


def pytrec_means(path: Path) -> dict[str, dict[str, float]]:
    out = {}
    for ln in path.read_text().splitlines():
        f = ln.split()
        out[run_name(f[0])] = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in f[2:]}
    return out


def stats(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collection", choices=("synth", "dl19", "all"), default="all")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--paths", default="one-shot,file-store,start-up")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--json")
    ap.add_argument(
        "--evalstore",
        help="the command that runs evalstore (default: the console script beside this Python), e.g. "
        "'python -m evalstore' with PYTHONPATH at another checkout, for a before/after",
    )
    a = ap.parse_args(argv)
    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    paths = set(a.paths.split(","))
    cols = []
    if a.collection in ("synth", "all"):
        cols.append(synth_collection(work))
    if a.collection in ("dl19", "all"):
        cols.append(dl19_collection())
    cols = [c for c in cols if c]
    es = a.evalstore.split() if a.evalstore else evalstore_cmd()
    metric_args = [x for m in MEASURES.values() for x in ("-m", m[0])]
    keys = {label: m[1] for label, m in MEASURES.items()}
    print(f"load average at start {loadavg()}; {os.cpu_count()} cores; repeat {a.repeat}; evalstore: {' '.join(es)}")
    record: dict = {"load_start": loadavg(), "rows": []}
    ok = True
    with tempfile.TemporaryDirectory(dir=work) as tmp_s:
        tmp = Path(tmp_s)
        script = tmp / "pytrec_job.py"
        script.write_text(PYTREC_SCRIPT.format(keys=keys))
        jobs: list[tuple[str, str, object]] = []
        for col in cols:
            pt = [sys.executable, str(script), col["qrels"], *col["runs"]]
            if "one-shot" in paths:
                one = [*es, "eval", col["qrels"], *col["runs"], *metric_args]
                jobs.append((col["name"], "one-shot", one))
            if "file-store" in paths:
                jobs.append((col["name"], "file store", ("store", col, metric_args)))
            jobs.append((col["name"], "pytrec_eval", pt))
        if "start-up" in paths:
            jobs.append(("-", "--version", [*es, "--version"]))
            jobs.append(("-", "--help", [*es, "--help"]))
        results: dict[tuple[str, str], list[dict]] = {(c, p): [] for c, p, _ in jobs}
        for i in range(a.repeat):
            for col_name, path, cmd in jobs:
                out = tmp / f"{col_name}-{path.replace(' ', '_')}.out"
                if isinstance(cmd, tuple):
                    _, col, margs = cmd
                    db = tmp / "bench.duckdb"
                    for suffix in ("", ".wal"):
                        Path(str(db) + suffix).unlink(missing_ok=True)
                    r = summed(
                        [
                            timed([*es, "--db", str(db), "ingest", "qrels", col["qrels"]]),
                            timed([*es, "--db", str(db), "ingest", "run", *col["runs"]]),
                            timed([*es, "--db", str(db), "eval", *margs], out),
                        ]
                    )
                else:
                    r = timed(cmd, out)
                results[(col_name, path)].append(r)
                print(
                    f"  {col_name:6s} {path:12s} wall {r['wall']:6.2f} s  cpu {r['cpu']:6.2f} s  "
                    f"peak {r['peak_mb']:5.0f} MB",
                    flush=True,
                )
            if i == 0:
                for col in cols:
                    ref = tmp / f"{col['name']}-pytrec_eval.out"
                    for path in ("one-shot", "file store"):
                        got = tmp / f"{col['name']}-{path.replace(' ', '_')}.out"
                        if got.exists():
                            ok = agree(col["name"], path, evalstore_means(got), pytrec_means(ref)) and ok
    print(f"\nload average at the end {loadavg()}\n")
    head = (
        f"{'collection':10s} {'command':12s} {'wall s min/med/max':>22s} {'cpu s min/med/max':>22s} "
        f"{'peak MB':>8s} {'wall ratio':>10s} {'cpu ratio':>9s}"
    )
    print(head)
    for (col_name, path), rs in results.items():
        w, c, m = stats([r["wall"] for r in rs]), stats([r["cpu"] for r in rs]), max(r["peak_mb"] for r in rs)
        ref = results.get((col_name, "pytrec_eval"))
        wr = cr = ""
        if ref and path != "pytrec_eval":
            wr = f"{w[1] / statistics.median(r['wall'] for r in ref):.2f}x"
            cr = f"{c[1] / statistics.median(r['cpu'] for r in ref):.2f}x"
        print(
            f"{col_name:10s} {path:12s} {w[0]:6.2f}/{w[1]:6.2f}/{w[2]:6.2f} {c[0]:6.2f}/{c[1]:6.2f}/{c[2]:6.2f} "
            f"{m:8.0f} {wr:>10s} {cr:>9s}"
        )
        record["rows"].append({"collection": col_name, "command": path, "runs": rs, "wall_ratio": wr, "cpu_ratio": cr})
    record["load_end"] = loadavg()
    if a.json:
        Path(a.json).write_text(json.dumps(record, indent=1))
    if not ok:
        print("\nFAIL: evalstore's means disagree with pytrec_eval's")
        return 1
    return 0


def agree(col: str, path: str, got: dict, ref: dict) -> bool:
    worst = 0.0
    missing = set(ref) ^ set(got)
    for run, vals in ref.items():
        for m, v in vals.items():
            if run in got and m in got[run]:
                worst = max(worst, abs(got[run][m] - v))
    good = not missing and worst <= 1e-4 + 5e-5  # evalstore prints 4 decimals: half a unit of rounding
    print(f"  agreement {col} {path}: {'AGREE' if good else 'DISAGREE'} (max |diff| {worst:.1e}, {len(ref)} runs)")
    return good


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""All of issue 15's measurements in one run: targets against measured values, and a JSON record.

    python bench/bench_all.py [--quick] [--json OUT.json] [--work-dir DIR]

Runs, one after the other (each tool and phase in its own process; read the scripts for details):

1. ``bench_trec.py``: one-shot end to end (read files, ingest, evaluate seven measures) on the
   synthetic 100 runs x 50 x 1000 and TREC DL 2019, interleaved with pytrec_eval (and ranx unless
   ``--quick``); peak RSS per tool; "stored" = evalstore's evaluation step alone (runs already in
   the store) against pytrec_eval's end to end.
2. ``graded_udf_timing.py``: the Python UDFs (P-plus, NDPM, Kendall-tau, Spearman) against the SQL
   metrics on DL 2020.
3. ``bench_scale.py``: ingest / evaluate / evaluate again / add one run into a store file, for 10,
   100 and 1,000 synthetic runs (``--quick``: 10 and 100), with the default memory budget.

``--quick`` takes one repetition of everything and leaves out ranx and the 1,000-run collection
(minutes instead of a quarter of an hour). The machine is shared: read ranges, not single values.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> None:
    cmd = [sys.executable, str(HERE / script), *args]
    print(f"\n$ {' '.join(cmd[1:])}", flush=True)
    subprocess.run(cmd, check=True)


def targets(trec: dict, udf: dict, scale: dict) -> list[tuple[str, str, str, bool | None]]:
    """(target, goal, measured, met) rows."""
    rows: list[tuple[str, str, str, bool | None]] = []
    by = {(r["collection"], r["variant"]): r for r in trec.get("rows", [])}
    for col, goal in (("synth", 0.7), ("dl19", 0.6)):
        es, pt = by.get((col, "evalstore")), by.get((col, "pytrec_eval"))
        if es and pt:
            ratio = es["total"] / pt["total"]
            rows.append((f"one-shot end to end, {col}", f"<= {goal}x pytrec_eval", f"{ratio:.2f}x", ratio <= goal))
            if col == "synth":
                stored = es["eval"] / pt["total"]
                rows.append(("stored-run evaluation, synth", "<= 0.12x", f"{stored:.3f}x", stored <= 0.12))
                rows.append(
                    (
                        "peak RSS one-shot 5 M lines",
                        "<= 350 MB",
                        f"{es['peak_rss_mb']:.0f} MB",
                        es["peak_rss_mb"] <= 350,
                    )
                )
    if udf:
        for a, b, f, label in (
            ("NDPM", "ADM", 1.0, "NDPM <= ADM"),
            ("P-plus", "P-measure", 1.3, "P-plus <= 1.3x P-measure"),
        ):
            r = udf[a] / udf[b]
            rows.append((f"UDF {a} (DL 2020)", label, f"{udf[a]:.2f} s vs {udf[b]:.2f} s = {r:.2f}x", r <= f))
        for m in ("Kendall-tau", "Spearman"):
            rows.append((f"UDF {m} (DL 2020)", "<= 1 s", f"{udf[m]:.2f} s", udf[m] <= 1.0))
    recs = scale.get("records", [])
    for n in sorted({r["runs"] for r in recs}):
        ph = {r["phase"]: r for r in recs if r["runs"] == n}
        if "again" in ph:
            rows.append(
                (f"re-evaluate {n} runs", "<= 1 s", f"{ph['again']['seconds']:.2f} s", ph["again"]["seconds"] <= 1)
            )
        if "add1" in ph and "one" in ph:
            r = ph["add1"]["seconds"] / ph["one"]["seconds"]
            rows.append((f"add 1 run to {n}, eval all", "<= 2x that run alone", f"{r:.2f}x", r <= 2))
        for p in ("ingest", "eval"):
            if p in ph:
                limit = 1500 if n >= 1000 else 350 if n == 100 else None
                rows.append(
                    (
                        f"{p} {n} runs ({n * 50_000 / 1e6:g} M lines)",
                        f"peak <= {limit} MB" if limit else "-",
                        f"{ph[p]['seconds']:.1f} s, {ph[p]['peak_mb']:.0f} MB",
                        ph[p]["peak_mb"] <= limit if limit else None,
                    )
                )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write the record (all measurements and the target table) here")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    a = ap.parse_args(argv)
    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    out = {k: work / f"bench_all_{k}.json" for k in ("trec", "udf", "scale")}
    load0 = os.getloadavg()
    t0 = time.time()
    tools = "evalstore,pytrec_eval" if a.quick else "evalstore,pytrec_eval,ranx"
    reps = "1" if a.quick else "3"
    run("bench_trec.py", "--repeat", reps, "--tools", tools, "--work-dir", str(work), "--json", str(out["trec"]))
    run(
        "graded_udf_timing.py",
        "--repeat",
        "2" if a.quick else "3",  # the first call of a UDF pays for warming up
        "--quick",
        "--db",
        str(work / "dl20.duckdb"),
        "--json",
        str(out["udf"]),
    )
    runs = "10,100" if a.quick else "10,100,1000"
    run("bench_scale.py", "--runs", runs, "--repeat-eval", "--work-dir", str(work), "--json", str(out["scale"]))
    data = {k: json.loads(p.read_text()) if p.exists() else {} for k, p in out.items()}
    rows = targets(data["trec"], data["udf"], data["scale"])
    load1 = os.getloadavg()
    print(f"\n== targets (issue 15); load average {load0[0]:.2f} at start, {load1[0]:.2f} at the end")
    w = max(len(r[0]) for r in rows) if rows else 10
    for target, goal, measured, met in rows:
        mark = "-" if met is None else ("met" if met else "MISSED")
        print(f"  {target:<{w}}  {goal:<22} {measured:<34} {mark}")
    if a.json:
        record = {
            "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime(t0)),
            "quick": a.quick,
            "load": [load0, load1],
            "targets": [dict(zip(("target", "goal", "measured", "met"), r, strict=True)) for r in rows],
            **data,
        }
        Path(a.json).write_text(json.dumps(record, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time the graded-relevance metrics that run as Python UDFs (P+-measure, NDPM, Kendall-tau,
Spearman) against SQL-only metrics on TREC DL 2020 passage (59 runs, 54 judged topics).

    python bench/graded_udf_timing.py [--data ../shared/data/trec-dl-2020-passage] [--repeat 3] [--db FILE]

``--db FILE`` keeps the ingested collection in a store file and reuses it on the next call.

Each metric is evaluated alone for all runs (``store.evaluate(..., save=False)``), ``--repeat``
times; the best time is printed, and the net time after subtracting the baseline (NumRet: the
engine's ranked-list build plus a trivial SQL block). Pairs to compare:

* P-plus (UDF over each topic's judged ranked list) vs P-measure and O-measure (SQL, same list);
* NDPM / Kendall-tau / Spearman (UDFs over D = retrieved + judged docs, ~1000-1200 docs per topic)
  vs ADM (SQL over the very same D: the cost of building D is the same, only the aggregate differs).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import evalstore

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2020-passage"

BASELINE = "NumRet"
SQL_METRICS = ["O-measure", "P-measure", "Q-measure", "ERR", "nDCG-JK@10", "WAP", "AGR", "ADM"]
UDF_METRICS = ["P-plus", "NDPM", "Kendall-tau", "Spearman"]


def best_time(store, metric: str, repeat: int) -> tuple[float, float]:
    times = []
    res = None
    for _ in range(repeat):
        t = time.perf_counter()
        res = store.evaluate("dl20", None, [metric], save=False)
        times.append(time.perf_counter() - t)
    mean = sum(v for _, _, v, _ in res.means) / len(res.means)
    return min(times), mean


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--db", default=":memory:", help="store file to keep (and reuse) the ingested collection")
    ap.add_argument("--quick", action="store_true", help="only the metrics of the issue-15 targets")
    ap.add_argument("--json", help="also write {metric: best seconds} to this file")
    args = ap.parse_args()
    if not args.data.exists():
        raise SystemExit(f"{args.data} not found; pass --data DIR (a TREC DL folder with qrels.txt and runs/)")

    store = evalstore.open(args.db)
    t = time.perf_counter()
    if "dl20" not in store.qrels_names():
        store.ingest_qrels(args.data / "qrels.txt", name="dl20", progress=False)
        store.ingest_run(sorted((args.data / "runs").glob("*")), progress=False)
        print(f"ingested the qrels and runs in {time.perf_counter() - t:.2f} s")
    n_runs = len(store.run_names())
    n_rows = store.sql("SELECT count(*) FROM run_rows").rows[0][0]
    print(f"{n_runs} runs, {n_rows} run rows")

    base, _ = best_time(store, BASELINE, args.repeat)
    print(f"\nbest of {args.repeat}, all {n_runs} runs; net = minus the baseline {BASELINE} ({base:.3f} s)\n")
    print(f"{'metric':<14} {'kind':<5} {'seconds':>8} {'net':>8}   mean over runs")
    results = {}
    sql_metrics = ["P-measure", "ADM"] if args.quick else SQL_METRICS
    for kind, metrics in (("SQL", sql_metrics), ("UDF", UDF_METRICS)):
        for m in metrics:
            sec, mean = best_time(store, m, args.repeat)
            results[m] = sec
            print(f"{m:<14} {kind:<5} {sec:8.3f} {sec - base:8.3f}   {mean:.4f}")
    print("\nratios (UDF / SQL, total time):")
    for udf, sql in (
        ("P-plus", "P-measure"),
        *([] if args.quick else [("P-plus", "O-measure")]),
        ("NDPM", "ADM"),
        ("Kendall-tau", "ADM"),
        ("Spearman", "ADM"),
    ):
        print(f"  {udf:<12} / {sql:<10} = {results[udf] / results[sql]:.2f}")
    store.close()
    if args.json:
        Path(args.json).write_text(json.dumps({"baseline": base, **results}))


if __name__ == "__main__":
    main()

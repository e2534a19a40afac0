"""Time the bulk evaluation of TREC DL 2019 passage (37 runs) against its qrels and Bompada's 14
subsamples (one trial) with 10 metrics, in one evaluate_many call.

    python bench/subsample_timing.py [--data ../shared/data/trec-dl-2019-passage] [--db FILE]
                                     [--trials 1] [--repeat 1]

Prints the time of each step (ingest, subsampling, bulk evaluation) and the size of the job; for
the bulk evaluation also the CPU time of the process (all DuckDB threads), which is less affected
by other load on the machine than the wall-clock time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import evalstore
from evalstore.metrics import registry
from evalstore.subsample import create_subsamples, evaluate_subsamples

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"

# Ten metrics over two ranked-list contexts (full list and condensed list); trec_eval's Bpref and
# infAP are used when registered, else two more bpref variants take their places.
METRICS = [
    "AP",
    "nDCG@10",
    "P@10",
    "RR",
    "AP(judged_only=true)",
    "nDCG(judged_only=true)@10",
    "Bpref",
    "infAP",
    "bpref_relative",
    "rpref_relative2",
]
FALLBACK = {"Bpref": "bpref_R", "infAP": "bpref_N"}


def available(name: str) -> bool:
    try:
        registry.parse_metric(name)
        return True
    except evalstore.EvalstoreError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="TREC DL 2019 passage folder (qrels.txt, runs/)")
    ap.add_argument("--db", default=":memory:", help="store file (default: in memory)")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="time the bulk evaluation this many times")
    args = ap.parse_args()
    data = Path(args.data)
    metrics = [m if available(m) else FALLBACK[m] for m in METRICS]

    store = evalstore.open(args.db)
    t0 = time.perf_counter()
    store.ingest_qrels(data / "qrels.txt", name="dl19", progress=False, replace=True)
    store.ingest_run(sorted((data / "runs").glob("*.gz")), progress=False, replace=True)
    t1 = time.perf_counter()
    names = create_subsamples(store, "dl19", "bompada", trials=args.trials, replace=True)
    t2 = time.perf_counter()
    n_runs = len(store.run_names())
    n_rows = store.sql("SELECT count(*) FROM run_row_data").rows[0][0]
    print(f"data: {data}")
    print(f"ingest qrels + {n_runs} runs ({n_rows} rows): {t1 - t0:.2f} s")
    print(f"create {len(names)} subsamples (Bompada grid, {args.trials} trial(s)): {t2 - t1:.2f} s")
    print(f"metrics ({len(metrics)}): {', '.join(metrics)}")
    for i in range(args.repeat):
        t3, c3 = time.perf_counter(), time.process_time()
        results = evaluate_subsamples(store, "dl19", None, metrics, "all", progress=False)
        t4, c4 = time.perf_counter(), time.process_time()
        n_scores = store.sql("SELECT count(*) FROM score_data").rows[0][0]
        print(
            f"bulk eval #{i + 1}: {n_runs} runs x {len(results)} qrels sets (parent + {len(results) - 1} "
            f"subsamples) x {len(metrics)} metrics = {n_runs * len(results) * len(metrics)} run-level "
            f"scores, {n_scores} per-topic scores stored: {t4 - t3:.2f} s wall, {c4 - c3:.2f} s CPU "
            f"(all threads)"
        )
    store.close()


if __name__ == "__main__":
    main()

"""Timing of the meta-evaluation resampling on TREC DL 2020 (59 runs, 1711 run pairs, 54 topics).

    python bench/meta_timing.py [--db dl20.duckdb] [--shared ../shared] [--trials 1000] [--repeat 3]

Ingests the DL 2020 passage qrels and runs into the store (skipped when it already holds them),
evaluates AP(rel=2), then times, for B resamples:

* the bootstrap sensitivity method (paired bootstrap test of all 1711 pairs, ASLs, discriminative
  power, estimated difference) on the score matrix, and the whole `meta.discpower` call (fetching
  the matrix from the store, sorting, persisting 1711 pair rows);
* the swap method (B pairs of topic sets, 21 bins) on the score matrix, and `meta.swap`;
* the t-test, Wilcoxon and randomisation tests over all pairs.

Prints the best of ``--repeat`` runs of each (the first call also pays for imports).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import evalstore  # noqa: E402
from evalstore import meta  # noqa: E402
from evalstore.stats.sampling import pair_indices  # noqa: E402


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="store file (default: a temporary file)")
    ap.add_argument("--shared", default=os.environ.get("EVALSTORE_SHARED", str(ROOT.parent / "shared")))
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--metric", default="AP(rel=2)")
    args = ap.parse_args()
    data = Path(args.shared) / "data" / "trec-dl-2020-passage"
    if not data.is_dir():
        sys.exit(f"needs the TREC DL 2020 data in {data} (pass --shared)")
    tmp = None
    db = args.db
    if db is None:
        tmp = tempfile.TemporaryDirectory()
        db = os.path.join(tmp.name, "dl20.duckdb")
    store = evalstore.open(db)
    if "dl20" not in store.qrels_names():
        t = time.perf_counter()
        store.ingest_qrels(data / "qrels.txt", name="dl20", progress=False)
        store.ingest_run(sorted((data / "runs").glob("*.run.gz")), progress=False)
        print(f"ingest DL 2020 (59 runs):                {time.perf_counter() - t:7.2f} s")
    t = time.perf_counter()
    m = meta.score_matrix(store, "dl20", args.metric)
    print(f"evaluate {args.metric} + fetch matrix {m.shape}:  {time.perf_counter() - t:7.2f} s")
    B = args.trials
    ii, jj = pair_indices(len(m.runs))
    Z = m.values[ii] - m.values[jj]
    print(f"{len(m.runs)} runs, {len(ii)} pairs, {len(m.topics)} topics, B = {B}, best of {args.repeat}:")

    tb, r = best(lambda: meta.paired_bootstrap(Z, B, 0), args.repeat)
    print(
        f"  bootstrap sensitivity (arrays):        {tb:7.3f} s   {r.n_significant}/{len(ii)} pairs with "
        f"ASL < 0.05, estimated diff {r.estimated_diff:#.2g}"
    )
    td, a = best(lambda: meta.discpower(store, "dl20", [args.metric], trials=B, seed=0), args.repeat)
    print(f"  meta.discpower (store, saved):         {td:7.3f} s")
    ts, w = best(lambda: meta.swap_method(m.values, B, 0), args.repeat)
    print(
        f"  swap method (arrays):                  {ts:7.3f} s   abs. diff {w.abs_diff:.2f}, max {w.max_diff:.4f}, "
        f"{100 * w.share:.0f}% of comparisons"
    )
    tw, _ = best(lambda: meta.swap(store, "dl20", [args.metric], trials=B, seed=0), args.repeat)
    print(f"  meta.swap (store, saved):              {tw:7.3f} s")
    tt, _ = best(lambda: meta.paired_t(Z), args.repeat)
    tx, _ = best(lambda: meta.wilcoxon(Z), args.repeat)
    tr, _ = best(lambda: meta.randomisation(Z, B, 0), args.repeat)
    print(f"  t-test / Wilcoxon / randomisation:     {tt:7.3f} / {tx:.3f} / {tr:.3f} s")
    store.close()
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()

"""Server-side time of the web pages (issue 26: the leaderboard of 1,000 runs in <= 1 s, a run page
in <= 0.5 s) on a synthetic collection.

Builds (once, in --work) a collection with ../shared/tools/gen_synth.py: 1,000 runs x 50 topics x
100 documents per topic (5 M run lines: ingest and evaluation take well under a minute on 2 cores),
ingests it and evaluates AP, nDCG@10 and P@10; then times, in process with Starlette's test client
(each request opens the store read-only and closes it, as `evalstore serve` does), the leaderboard,
a run page, a comparison page, a topic page, the meta page and the report's page builders, and
prints min / median / max over --reps repetitions.

    python bench/bench_web.py [--work bench/out/web] [--runs 1000] [--topics 50] [--depth 100] [--reps 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared")) / "tools" / "gen_synth.py"


def build(work: Path, runs: int, topics: int, depth: int) -> Path:
    import evalstore

    db = work / f"synth-{runs}x{topics}x{depth}.duckdb"
    if db.exists():
        return db
    coll = work / f"coll-{runs}x{topics}x{depth}"
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(GEN), "--out", str(coll), "--topics", str(topics), "--depth", str(depth),
         "--runs", str(runs), "--seed", "7", "--quiet"],
        check=True,
    )  # fmt: skip
    t1 = time.perf_counter()
    tmp = db.with_suffix(".building")
    with evalstore.open(tmp) as s:
        s.ingest_qrels(coll / "qrels.txt", name="synth", progress=False)
        s.ingest_run(sorted((coll / "runs").glob("*.txt")), progress=False)
        t2 = time.perf_counter()
        s.evaluate("synth", None, ["AP", "nDCG@10", "P@10"], progress=False)
    os.replace(tmp, db)
    t3 = time.perf_counter()
    print(f"built {db}: generate {t1 - t0:.1f} s, ingest {t2 - t1:.1f} s, evaluate {t3 - t2:.1f} s")
    return db


def timed(fn, reps: int) -> tuple[float, float, float]:
    fn()  # warm-up (first import of templates, DuckDB's caches)
    xs = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t)
    return min(xs), statistics.median(xs), max(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(ROOT / "bench" / "out" / "web"))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    db = build(work, args.runs, args.topics, args.depth)

    import warnings

    warnings.filterwarnings("ignore", message=".*httpx.*starlette.testclient")  # Starlette 1.x prefers httpx2
    from starlette.testclient import TestClient

    import evalstore
    from evalstore.web import pages, queries
    from evalstore.web.app import Source, create_app
    from evalstore.web.links import LiveLinks

    with evalstore.open(db, read_only=True) as s:
        board = queries.leaderboard(s, "synth", "AP")
        first_topic = queries.topics_with_scores(s, "synth", "AP")[0]
    best, median_run = board[0].run, board[len(board) // 2].run
    client = TestClient(create_app(Source(str(db))))

    def get(url: str):
        def fn() -> None:
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code)

        return fn

    def builder() -> None:
        with evalstore.open(db, read_only=True) as s:
            pages.run_page(pages.Ctx(s, LiveLinks()), median_run, "synth", "AP")

    cases = [
        (f"leaderboard, {len(board)} runs (GET /)", get("/?qrels=synth&metric=AP"), 1.0),
        (f"run page, {args.topics} topics (GET /runs/{median_run})", get(f"/runs/{median_run}?metric=AP"), 0.5),
        ("comparison page (GET /compare)", get(f"/compare?baseline={best}&run={median_run}&metric=AP"), None),
        (f"topic page (GET /topics/{first_topic})", get(f"/topics/{first_topic}?runs={best},{median_run}"), None),
        ("leaderboard CSV (GET /download/leaderboard.csv)", get("/download/leaderboard.csv?metric=AP"), None),
        ("run page builder alone (no HTTP, no template)", builder, None),
    ]
    load = os.getloadavg()
    print(f"store: {db} ({db.stat().st_size / 1e6:.0f} MB); {args.reps} repetitions; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'page':58s} {'min':>8s} {'median':>8s} {'max':>8s}  target")
    ok = True
    for name, fn, target in cases:
        lo, med, hi = timed(fn, args.reps)
        verdict = "" if target is None else (f"<= {target:g} s " + ("ok" if med <= target else "MISSED"))
        ok &= target is None or med <= target
        print(f"{name:58s} {lo:8.3f} {med:8.3f} {hi:8.3f}  {verdict}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

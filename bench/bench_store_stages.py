#!/usr/bin/env python3
"""CPU ns per line of each stage of the store path (``ingest run`` of the 100 TREC-shape files,
then ``eval`` of 7 measures), one process, stages run on their own.

    python bench/bench_store_stages.py [--work-dir DIR] [--repeat 3]
    PYTHONPATH=OLD_CHECKOUT python bench/bench_store_stages.py ...   # the same stages, other code

Stages (CPU = user + system of the whole process, all threads; the minimum over ``--repeat``):

* ``read + hash``: the files' bytes as blocks of whole lines with their sha256 (``LineBlocks``);
* ``check bytes``: the byte scan of each block (``fast.clean``);
* ``parse``: Arrow's CSV parse of each block (``fast._parsed``);
* ``check + rank``: one tag, rank digits, finite scores, duplicates, trec_eval's rank
  (``fast._ranked``, on the parsed blocks);
* ``ingest run (whole)``: ``Store.ingest_run`` of every file into a new store file;
  ``write + rest`` is the whole less the four stages above (inserting the rows, ``run_meta``,
  the transaction, the overlap of the reading threads);
* ``eval``: ``Store.evaluate`` of the 7 measures over every stored run (saved).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_trec import synth_collection  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "R@1000"]


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    import evalstore
    from evalstore.ingest import fast
    from evalstore.ingest.blocks import LineBlocks

    col = synth_collection(Path(a.work_dir))
    if col is None:
        raise SystemExit("the TREC shape needs ../shared/tools/gen_synth.py")
    runs = [Path(p) for p in col["runs"]]
    tag0 = {p: open(p).readline().split()[5] for p in runs}
    n_lines = 0
    for p in runs:
        with open(p, "rb") as f:
            n_lines += sum(chunk.count(b"\n") for chunk in iter(lambda f=f: f.read(1 << 22), b""))

    def blocks() -> list[tuple[Path, bytes]]:
        return [(p, b) for p in runs for b in LineBlocks(p, "none")]

    held = blocks()
    parsed = [(p, fast._parsed(b, " ", 0)) for p, b in held]

    def ingest() -> None:
        folder = Path(tempfile.mkdtemp(prefix="stages-", dir=a.work_dir))
        try:
            with evalstore.open(str(folder / "s.duckdb"), create=True) as s:
                s.ingest_run([str(p) for p in runs], progress=False)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    store_dir = Path(tempfile.mkdtemp(prefix="stages-eval-", dir=a.work_dir))
    db = str(store_dir / "s.duckdb")
    with evalstore.open(db, create=True) as s:
        s.ingest_qrels(col["qrels"], name="q", progress=False)
        s.ingest_run([str(p) for p in runs], progress=False)

    def evaluate() -> None:
        with evalstore.open(db) as s:
            s.evaluate("q", None, MEASURES, save=True, recompute=True, progress=False)

    stages = [
        ("read + hash", blocks),
        ("check bytes", lambda: [fast.clean(b, " ") for _, b in held]),
        ("parse", lambda: [fast._parsed(b, " ", 0) for _, b in held]),
        ("check + rank", lambda: [fast._ranked(t, tag0[p]) for p, t in parsed]),
        ("ingest run (whole)", ingest),
        ("eval", evaluate),
    ]
    best: dict[str, tuple[float, float]] = {}
    for _ in range(a.repeat):  # rounds interleaved: each stage once a round
        for name, fn in stages:
            c, w = cpu(), time.perf_counter()
            fn()
            got = (cpu() - c, time.perf_counter() - w)
            best[name] = min(best.get(name, got), got)
    shutil.rmtree(store_dir, ignore_errors=True)
    print(f"evalstore from {Path(evalstore.__file__).parent}; {len(runs)} files, {n_lines:,d} lines")
    print(f"{'stage':22s} {'CPU s':>7s} {'wall s':>7s} {'ns/line (CPU)':>14s}")
    parts = 0.0
    for name, _ in stages:
        c, w = best[name]
        print(f"{name:22s} {c:7.2f} {w:7.2f} {c / n_lines * 1e9:14.0f}")
        if name in ("read + hash", "check bytes", "parse", "check + rank"):
            parts += c
    rest = best["ingest run (whole)"][0] - parts
    print(f"{'write + rest':22s} {rest:7.2f} {'':7s} {rest / n_lines * 1e9:14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

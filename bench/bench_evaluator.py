#!/usr/bin/env python3
"""Per-call evaluation time, side by side: evalstore's Evaluator and evaluate() against
pytrec_eval, ir_measures and ranx, all in this process, on the same synthetic input.

Input (deterministic, seed 0): ``--topics`` topics x ``--docs`` retrieved documents per topic
(scores uniform), qrels judging every third document of 0..2*docs with grades 0..2; metric
``--metric`` (default nDCG@10; each tool's spelling below). What one call does:

* evalstore Evaluator: ``Evaluator(qrels, [metric])`` once, then ``ev.evaluate(run)`` per call
  (``{topic: {metric: value}}``, pytrec_eval's shape);
* evalstore evaluate(): ``evalstore.evaluate(qrels, {"r": run}, [metric])`` per call (qrels loaded
  every call; an EvalResult with the means);
* pytrec_eval: ``RelevanceEvaluator(qrels, {measure})`` once, ``evaluate(run)`` per call;
* ir_measures: ``ir_measures.evaluator([measure], qrels)`` once, ``calc_aggregate(run)`` per call;
* ranx: ``Qrels(qrels)`` once, ``evaluate(qrels, Run(run), metric)`` per call (numba compiled in
  an untimed warm-up).

Rounds interleave the tools (each round: every tool ``--calls`` calls); the table shows the median
per-call time over rounds and the range. The values are checked to agree (evalstore vs pytrec_eval
per topic, 1e-9).

Usage: python bench/bench_evaluator.py [--topics 10] [--docs 100] [--rounds 7] [--calls 200] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable

import evalstore
from evalstore import Evaluator

# evalstore name: (pytrec_eval measure, its result key), ir_measures name, ranx name
SPELLINGS = {
    "nDCG@10": (("ndcg_cut", "ndcg_cut_10"), "nDCG@10", "ndcg@10"),
    "AP": (("map", "map"), "AP", "map"),
    "P@10": (("P", "P_10"), "P@10", "precision@10"),
}


def make_input(topics: int, docs: int, seed: int = 0):
    rnd = random.Random(seed)
    qrels = {f"q{t}": {f"d{d}": rnd.choice([0, 0, 1, 2]) for d in range(0, 2 * docs, 3)} for t in range(topics)}
    run = {f"q{t}": {f"d{d}": rnd.random() for d in range(docs)} for t in range(topics)}
    return qrels, run


def dl19_input(run_file: str = "ICT-BERT2.run.gz"):
    """The TREC DL 2019 passage qrels and one official run (43 topics x 1000 documents), as dicts."""
    import gzip
    from pathlib import Path

    d = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "trec-dl-2019-passage"
    qrels: dict = {}
    for line in open(d / "qrels.txt"):
        t, _, doc, g = line.split()
        qrels.setdefault(t, {})[doc] = int(g)
    run: dict = {}
    with gzip.open(d / "runs" / run_file, "rt") as f:
        for line in f:
            t, _, doc, _, score, _ = line.split()
            run.setdefault(t, {})[doc] = float(score)
    return qrels, run


def tools(qrels, run, metric: str) -> dict[str, Callable[[], object]]:
    (pt_measure, _), irm_name, ranx_name = SPELLINGS[metric]
    out: dict[str, Callable[[], object]] = {}
    ev = Evaluator(qrels, [metric])
    out["evalstore Evaluator"] = lambda: ev.evaluate(run)
    out["evalstore evaluate()"] = lambda: evalstore.evaluate(qrels, {"r": run}, [metric])
    try:
        import pytrec_eval

        pt = pytrec_eval.RelevanceEvaluator(qrels, {pt_measure})
        out["pytrec_eval"] = lambda: pt.evaluate(run)
    except ImportError:
        print("pytrec_eval not installed: pip install pytrec-eval-terrier", file=sys.stderr)
    try:
        import ir_measures

        irm = ir_measures.evaluator([ir_measures.parse_measure(irm_name)], qrels)
        out["ir_measures"] = lambda: irm.calc_aggregate(run)
    except ImportError:
        print("ir_measures not installed: pip install ir-measures", file=sys.stderr)
    try:
        from ranx import Qrels, Run, evaluate

        rq = Qrels(qrels)
        evaluate(rq, Run(run), ranx_name)  # numba compilation, untimed
        out["ranx"] = lambda: evaluate(rq, Run(run), ranx_name)
    except ImportError:
        print("ranx not installed: pip install ranx", file=sys.stderr)
    return out


def check(qrels, run, metric: str) -> None:
    try:
        import pytrec_eval
    except ImportError:
        return
    pt_measure, pt_key = SPELLINGS[metric][0]
    ref = pytrec_eval.RelevanceEvaluator(qrels, {pt_measure}).evaluate(run)
    got = Evaluator(qrels, [metric]).evaluate(run)
    for topic, vals in ref.items():
        assert abs(vals[pt_key] - got[topic][metric]) < 1e-9, (topic, vals[pt_key], got[topic][metric])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--metric", default="nDCG@10", choices=sorted(SPELLINGS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--dl19", action="store_true", help="one TREC DL 2019 run (43 topics x 1000 docs) and its qrels")
    ap.add_argument("--json", help="also write the measurements to this JSON file")
    a = ap.parse_args(argv)
    qrels, run = dl19_input() if a.dl19 else make_input(a.topics, a.docs)
    check(qrels, run, a.metric)
    fns = tools(qrels, run, a.metric)
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(a.rounds):
        for name, fn in fns.items():
            calls = max(1, a.calls // 10) if "evaluate()" in name else a.calls
            for _ in range(3):
                fn()
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - t) / calls * 1000)
    ref = statistics.median(times["pytrec_eval"]) if "pytrec_eval" in times else None
    shape = "TREC DL 2019, one run (43 topics x 1000 docs)" if a.dl19 else f"{a.topics} topics x {a.docs} docs"
    load = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    print(f"{shape}, {a.metric}; {a.rounds} interleaved rounds; ms per call (wall); load average {load}")
    print(f"{'tool':<22} {'median':>8} {'range':>17} {'x pytrec_eval':>14}")
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = f"{med / ref:.1f}x" if ref else ""
        print(f"{name:<22} {med:8.3f} {min(ts):8.3f}-{max(ts):<8.3f} {ratio:>14}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "ms_per_call": times}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

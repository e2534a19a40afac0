#!/usr/bin/env python3
"""End-to-end benchmark: evalstore vs pytrec_eval (and ranx) on TREC-style collections.

"End to end" = read the files, load them, evaluate every run with seven measures, get the mean of
every (run, measure):

  ==========  ============  ==============  =============
  measure     evalstore     pytrec_eval     ranx
  ==========  ============  ==============  =============
  AP          AP            map             map
  P@10        P@10          P_10            precision@10
  nDCG        nDCG          ndcg            ndcg
  nDCG@10     nDCG@10       ndcg_cut_10     ndcg@10
  RR          RR            recip_rank      mrr
  Bpref       Bpref         bpref           bpref
  R@1000      R@1000        recall_1000     recall@1000
  ==========  ============  ==============  =============

What each tool does (each in its own subprocess, so its peak RSS is its own):

* evalstore: ``evalstore.open()`` (in memory by default; ``--store file`` for a DuckDB file), ingest
  the qrels, ingest all runs (one call), ``store.evaluate()`` all runs with the seven measures
  (default options: per-topic scores are saved in the store, as a user gets them).
* pytrec_eval: its own readers ``pytrec_eval.parse_qrel`` / ``parse_run`` (``{topic: {doc: x}}``
  dicts), one ``RelevanceEvaluator``, then per run: parse, ``evaluate``, mean over topics. Runs are
  streamed one at a time (only one run in Python memory at once), the frugal way to use it.
* ranx: ``Qrels.from_file`` / ``Run.from_file`` and ``ranx.evaluate`` per run, streamed the same
  way. ranx needs the run and qrels to have the same topics; to get trec_eval's default (topics in
  both, means over those) the run is made comparable and the mean is taken over the topics the run
  actually has. ranx JIT-compiles with numba; three variants are measured:
    - ``ranx``: fresh process, numba's on-disk cache already filled (what a user sees from the
      second script run on); the cache load and any remaining compilation are inside the timing.
    - ``ranx-warm``: same, after an untimed warm-up evaluation on a tiny collection in the process.
    - ``ranx-jit`` (only with ``--ranx-jit``; takes minutes): fresh process with an empty numba
      cache, i.e. the first run ever, full JIT compilation inside the timing. Measured once,
      whatever ``--repeat`` says.
  numba's cache for ``ranx``/``ranx-warm`` lives in ``--work-dir``/numba-cache; it is filled by an
  untimed child before the first timing (the first time ever this takes minutes).

Columns: ``import`` (importing the tool), ``load`` (parse/ingest: files to the tool's structures),
``eval`` (evaluation incl. means), ``total`` = load + eval, ``cpu`` = user+sys CPU seconds of the
child for load + eval (DuckDB and numba use both cores; pytrec_eval one), ``peak MB`` = the
child's peak RSS (VmHWM, incl. interpreter and libraries), ``+MB`` = peak minus the
RSS right after the imports. Ratios are against pytrec_eval on the same collection (time: total;
memory: peak). Each (tool, collection) runs ``--repeat`` times, interleaved with the other tools
(so that a change of the machine's speed during the run hits all alike); the repetition with the
lowest total is shown (best of N: on a shared machine, other load only ever adds time), with the
range of totals.

Agreement: the mean of every (run, measure) of every tool is compared with pytrec_eval's (trec_eval
is the reference) and the number of evaluated topics per run too; evalstore must agree within 1e-4,
else the script exits with status 1.

Collections:
  dl19   the 37 TREC DL 2019 passage runs (../shared/data/trec-dl-2019-passage; skipped when absent)
  synth  100 runs x 50 topics x 1000 docs from ../shared/tools/gen_synth.py
         (``--runs 100 --topics 50 --depth 1000``, seed 0: deterministic), generated once into
         ``--work-dir`` (default ``$TMPDIR/evalstore-bench``) and reused.

Usage:
  python bench/bench_trec.py [--collection dl19|synth|all] [--repeat N]
                             [--tools evalstore,pytrec_eval,ranx] [--store memory|file]
                             [--ranx-jit] [--work-dir DIR] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
DL19_DIR = SHARED / "data" / "trec-dl-2019-passage"
GEN_SYNTH = SHARED / "tools" / "gen_synth.py"
SYNTH_ARGS = ["--runs", "100", "--topics", "50", "--depth", "1000", "--seed", "0"]

# label -> (evalstore, pytrec_eval, ranx)
MEASURES = {
    "AP": ("AP", "map", "map"),
    "P@10": ("P@10", "P_10", "precision@10"),
    "nDCG": ("nDCG", "ndcg", "ndcg"),
    "nDCG@10": ("nDCG@10", "ndcg_cut_10", "ndcg@10"),
    "RR": ("RR", "recip_rank", "mrr"),
    "Bpref": ("Bpref", "bpref", "bpref"),
    "R@1000": ("R@1000", "recall_1000", "recall@1000"),
}
TOLERANCE = 1e-4
TOOLS = ("evalstore", "pytrec_eval", "ranx")


# --------------------------------------------------------------------------- helpers (both sides)
def run_name(path: str) -> str:
    """Run name from the file name, as ``evalstore ingest run --name-from file`` strips suffixes."""
    stem = Path(path).name
    for suf in (".gz", ".txt", ".run", ".res", ".trec"):
        if stem.endswith(suf):
            stem = stem[: -len(suf)]
    return stem


def open_text(path: str):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt") if gz else open(path)


def _proc_status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def rss_now_mb() -> float:
    v = _proc_status_mb("VmRSS")
    return float("nan") if v is None else v


def peak_rss_mb() -> float:
    """Peak RSS of this process. Linux's VmHWM belongs to the process image, while getrusage's
    ru_maxrss survives exec: a child would report its parent's size at fork if that was larger."""
    v = _proc_status_mb("VmHWM")
    if v is not None:
        return v
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux (macOS: bytes)


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --------------------------------------------------------------------------- child: one tool, one collection
def child_evalstore(spec: dict, t: dict) -> tuple[dict, dict]:
    t0 = time.perf_counter()
    import evalstore

    t["import"] = time.perf_counter() - t0
    t["base_rss_mb"] = rss_now_mb()
    c0, t0 = cpu_seconds(), time.perf_counter()
    store = evalstore.open(spec["store_path"] or ":memory:")
    store.ingest_qrels(spec["qrels"], name="qrels", progress=False)
    store.ingest_run(spec["runs"], name_from="file", progress=False)
    t1 = time.perf_counter()
    metrics = [MEASURES[m][0] for m in spec["measures"]]
    res = store.evaluate("qrels", None, metrics, progress=False)
    t2 = time.perf_counter()
    t["load"], t["eval"], t["cpu"] = t1 - t0, t2 - t1, cpu_seconds() - c0
    means: dict = {}
    n_topics: dict = {}
    label_of = {MEASURES[m][0]: m for m in spec["measures"]}
    for run, metric, mean, n in res.means:
        means.setdefault(run, {})[label_of[metric]] = mean
        n_topics[run] = n
    store.close()
    return means, n_topics


def child_pytrec_eval(spec: dict, t: dict) -> tuple[dict, dict]:
    t0 = time.perf_counter()
    import pytrec_eval

    t["import"] = time.perf_counter() - t0
    t["base_rss_mb"] = rss_now_mb()
    keys = {m: MEASURES[m][1] for m in spec["measures"]}
    c0 = cpu_seconds()
    load = ev = 0.0
    a = time.perf_counter()
    with open_text(spec["qrels"]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    b = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(keys.values()))
    c = time.perf_counter()
    load += b - a
    ev += c - b
    means: dict = {}
    n_topics: dict = {}
    for path in spec["runs"]:
        a = time.perf_counter()
        with open_text(path) as f:
            run = pytrec_eval.parse_run(f)
        b = time.perf_counter()
        res = evaluator.evaluate(run)
        name = run_name(path)
        means[name] = {m: sum(v[k] for v in res.values()) / len(res) for m, k in keys.items()}
        n_topics[name] = len(res)
        del run, res
        c = time.perf_counter()
        load += b - a
        ev += c - b
    t["load"], t["eval"], t["cpu"] = load, ev, cpu_seconds() - c0
    return means, n_topics


def _ranx_warm_up(ranx, measures: list[str]) -> None:
    qrels = ranx.Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}})
    run = ranx.Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d4": 0.1}, "q2": {"d2": 1.0, "d1": 0.5}})
    ranx.evaluate(qrels, run.make_comparable(qrels), measures, return_mean=False, save_results_in_run=True)
    # ranx.evaluate sets numba to one thread for fewer than 10 topics, and it stays so: undo that
    import numba

    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def child_ranx(spec: dict, t: dict) -> tuple[dict, dict]:
    t0 = time.perf_counter()
    import numpy as np
    import ranx

    t["import"] = time.perf_counter() - t0
    keys = {m: MEASURES[m][2] for m in spec["measures"]}
    if spec["variant"] == "ranx-warm":
        w0 = time.perf_counter()
        _ranx_warm_up(ranx, list(keys.values()))
        t["warm_up"] = time.perf_counter() - w0
    t["base_rss_mb"] = rss_now_mb()
    c0 = cpu_seconds()
    load = ev = 0.0
    a = time.perf_counter()
    qrels = ranx.Qrels.from_file(spec["qrels"], kind="gz" if spec["qrels"].endswith(".gz") else "trec")
    load += time.perf_counter() - a
    qtopics = set(qrels.keys())
    means: dict = {}
    n_topics: dict = {}
    for path in spec["runs"]:
        a = time.perf_counter()
        run = ranx.Run.from_file(path, kind="gz" if path.endswith(".gz") else "trec")
        b = time.perf_counter()
        topics = [q for q in run.keys() if q in qtopics]
        comparable = run.make_comparable(qrels)
        ranx.evaluate(qrels, comparable, list(keys.values()), return_mean=False, save_results_in_run=True)
        name = run_name(path)
        means[name] = {m: float(np.mean([comparable.scores[k][q] for q in topics])) for m, k in keys.items()}
        n_topics[name] = len(topics)
        del run, comparable
        c = time.perf_counter()
        load += b - a
        ev += c - b
    t["load"], t["eval"], t["cpu"] = load, ev, cpu_seconds() - c0
    return means, n_topics


def child_main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    t: dict = {}
    fn = {"evalstore": child_evalstore, "pytrec_eval": child_pytrec_eval}.get(spec["tool"], child_ranx)
    means, n_topics = fn(spec, t)
    t["peak_rss_mb"] = peak_rss_mb()
    Path(out_path).write_text(json.dumps({"timing": t, "means": means, "n_topics": n_topics}))
    return 0


# --------------------------------------------------------------------------- parent
def synth_collection(work_dir: Path) -> dict | None:
    out = work_dir / "synth-r100-t50-d1000-seed0"
    manifest = out / "manifest.json"
    expected = {"runs": 100, "topics": 50, "depth": 1000, "seed": 0}
    ok = False
    if manifest.exists():
        args = json.loads(manifest.read_text()).get("args", {})
        ok = all(args.get(k) == v for k, v in expected.items()) and len(list((out / "runs").glob("*.txt"))) == 100
    if not ok:
        if not GEN_SYNTH.exists():
            print(f"note: skipping synth: generator {GEN_SYNTH} not found (set EVALSTORE_SHARED)")
            return None
        print(f"generating the synthetic collection into {out} (once; not timed) ...", flush=True)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, str(GEN_SYNTH), "--out", str(out), *SYNTH_ARGS, "--quiet"], check=True)
    runs = sorted(str(p) for p in (out / "runs").glob("*.txt"))
    return {
        "name": "synth",
        "qrels": str(out / "qrels.txt"),
        "runs": runs,
        "describe": "synthetic, 100 runs x 50 topics x 1000 docs (gen_synth.py seed 0)",
    }


def dl19_collection() -> dict | None:
    if not DL19_DIR.exists():
        print(f"note: skipping dl19: {DL19_DIR} not present (the project's shared/ folder)")
        return None
    runs = sorted(str(p) for p in (DL19_DIR / "runs").glob("*.run.gz"))
    return {
        "name": "dl19",
        "qrels": str(DL19_DIR / "qrels.txt"),
        "runs": runs,
        "describe": f"TREC DL 2019 passage, {len(runs)} official runs x 43 topics (gzipped)",
    }


def collection_size(col: dict) -> str:
    n = 0
    for p in col["runs"]:
        with open_text(p) as f:
            n += sum(1 for _ in f)
    return f"{len(col['runs'])} runs, {n:,} run lines"


def evalstore_has(metric: str) -> bool:
    from evalstore.errors import MetricError
    from evalstore.metrics import registry

    try:
        registry.parse_metric(metric)
    except MetricError:
        return False
    return True


def run_child(
    tool: str, variant: str, col: dict, measures: list[str], store: str, tmp: Path, numba_dir: Path | None
) -> dict:
    spec = {
        "tool": tool,
        "variant": variant,
        "qrels": col["qrels"],
        "runs": col["runs"],
        "measures": measures,
        "store_path": None,
    }
    if tool == "evalstore" and store == "file":
        spec["store_path"] = str(tmp / "bench.duckdb")
        for suffix in ("", ".wal"):
            Path(spec["store_path"] + suffix).unlink(missing_ok=True)
    spec_path, out_path = tmp / "spec.json", tmp / "out.json"
    spec_path.write_text(json.dumps(spec))
    out_path.unlink(missing_ok=True)
    env = dict(os.environ)
    if numba_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_dir)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(spec_path), str(out_path)], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{variant} on {col['name']} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    if spec["store_path"]:
        for suffix in ("", ".wal"):
            Path(spec["store_path"] + suffix).unlink(missing_ok=True)
    return json.loads(out_path.read_text())


def agreement(results: dict, measures: list[str]) -> tuple[list[str], bool]:
    """Compare every tool's means with pytrec_eval's (else evalstore's). Returns lines, evalstore_ok."""
    lines, ok = [], True
    ref_name = "pytrec_eval" if "pytrec_eval" in results else "evalstore"
    ref = results.get(ref_name)
    if ref is None or len(results) == 1:
        return ["(only one tool was run: nothing to compare)"], True
    for variant, res in results.items():
        if variant == ref_name or variant in ("ranx-warm", "ranx-jit"):
            continue  # same numbers as 'ranx'
        diffs = {m: 0.0 for m in measures}
        worst = {m: None for m in measures}
        over = 0
        missing = sorted(set(ref["means"]) ^ set(res["means"]))
        topic_mismatch = [r for r in ref["n_topics"] if res["n_topics"].get(r) != ref["n_topics"][r]]
        for run, vals in ref["means"].items():
            other = res["means"].get(run)
            if other is None:
                continue
            for m in measures:
                d = abs(vals[m] - other[m])
                if d > diffs[m]:
                    diffs[m], worst[m] = d, run
                over += d > TOLERANCE
        good = over == 0 and not missing and not topic_mismatch
        if variant == "evalstore":
            ok = ok and good
        lines.append(
            f"{variant} vs {ref_name}: {'AGREE' if good else 'DISAGREE'} "
            f"({len(ref['means'])} runs x {len(measures)} measures, tolerance {TOLERANCE:g}; "
            f"{over} means differ by more)"
        )
        lines.append(
            "    max |diff| per measure: "
            + ", ".join(f"{m} {diffs[m]:.2e}" + (f" ({worst[m]})" if diffs[m] > TOLERANCE else "") for m in measures)
        )
        if missing:
            lines.append(f"    runs not in both: {missing[:5]}")
        if topic_mismatch:
            lines.append(
                f"    evaluated topic counts differ for {len(topic_mismatch)} runs, e.g. {topic_mismatch[0]}: "
                f"{ref['n_topics'][topic_mismatch[0]]} vs {res['n_topics'].get(topic_mismatch[0])}"
            )
    return lines, ok


def fmt_table(rows: list[dict]) -> str:
    head = [
        "collection",
        "tool",
        "import s",
        "load s",
        "eval s",
        "total s",
        "(min-max)",
        "cpu s",
        "peak MB",
        "+MB",
        "time/pytrec",
        "mem/pytrec",
    ]
    body = []
    for r in rows:
        body.append(
            [
                r["collection"],
                r["variant"],
                f"{r['import']:.2f}",
                f"{r['load']:.2f}",
                f"{r['eval']:.2f}",
                f"{r['total']:.2f}",
                f"{r['total_min']:.2f}-{r['total_max']:.2f}",
                f"{r['cpu']:.2f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['peak_rss_mb'] - r['base_rss_mb']:.0f}",
                r["time_ratio"],
                r["mem_ratio"],
            ]
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    out = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    for b in body:
        out.append(
            "| " + " | ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(b, widths))) + " |"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring (and bench/README.md) for what is measured.",
    )
    ap.add_argument("--collection", choices=("dl19", "synth", "all"), default="all")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per (tool, collection); best shown")
    ap.add_argument(
        "--tools", default="evalstore,pytrec_eval,ranx", help="comma-separated subset of evalstore,pytrec_eval,ranx"
    )
    ap.add_argument(
        "--store",
        choices=("memory", "file"),
        default="memory",
        help="evalstore store: in memory, or a DuckDB file in the work dir",
    )
    ap.add_argument(
        "--work-dir",
        default=os.path.join(tempfile.gettempdir(), "evalstore-bench"),
        help="where the synthetic collection and scratch files go",
    )
    ap.add_argument(
        "--ranx-jit", action="store_true", help="also time ranx with an empty numba cache (full JIT compile; minutes)"
    )
    ap.add_argument("--json", help="also write all measurements to this JSON file")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return child_main(*a.child)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    tools = [t.strip() for t in a.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        ap.error(f"unknown tool(s) {bad}; choose from {','.join(TOOLS)}")
    if "ranx" in tools:  # checked in a child: importing ranx here would only bloat this process
        probe = subprocess.run([sys.executable, "-c", "import ranx"], capture_output=True, text=True)
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["import failed"])[-1]
            print(f"note: ranx unavailable ({last}); pip install ranx to include it")
            tools.remove("ranx")
    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)

    measures = list(MEASURES)
    if "evalstore" in tools and not evalstore_has("Bpref"):
        print("note: evalstore has no Bpref metric registered (yet): Bpref is left out for all tools")
        measures.remove("Bpref")

    cols = []
    if a.collection in ("dl19", "all"):
        cols.append(dl19_collection())
    if a.collection in ("synth", "all"):
        cols.append(synth_collection(work))
    cols = [c for c in cols if c]
    if not cols:
        print("nothing to run: no collection available (see the notes above)")
        return 0

    variants = []
    for t in tools:
        variants += (["ranx-jit"] if a.ranx_jit else []) + ["ranx", "ranx-warm"] if t == "ranx" else [t]

    import duckdb

    import evalstore

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; Python "
        f"{platform.python_version()}; evalstore {evalstore.__version__}, duckdb {duckdb.__version__}"
        + _versions(tools)
    )
    print(
        f"measures: {', '.join(measures)}; repeat {a.repeat}; evalstore store: {a.store}; "
        f"load average at start {_loadavg()}"
    )
    all_rows, all_results, evalstore_ok = [], {}, True
    with tempfile.TemporaryDirectory(dir=work) as tmp_s:
        tmp = Path(tmp_s)
        numba_shared = work / "numba-cache"
        for col in cols:
            print(f"\n== {col['name']}: {col['describe']}; {collection_size(col)}", flush=True)
            results, rows = {}, []
            if "ranx" in tools:  # fill numba's on-disk cache (untimed) for 'ranx' and 'ranx-warm'
                run_child("ranx", "ranx-warm", {**col, "runs": col["runs"][:1]}, measures, a.store, tmp, numba_shared)
            # Repetitions are interleaved (every tool once, then again ...), so that a change in the
            # machine's speed during the run (other jobs, a noisy VM neighbour) hits all tools alike.
            reps: dict[str, list] = {v: [] for v in variants}
            for i in range(a.repeat):
                for variant in variants:
                    if variant == "ranx-jit" and i > 0:
                        continue
                    tool = "ranx" if variant.startswith("ranx") else variant
                    numba_dir = None
                    if tool == "ranx":
                        numba_dir = numba_shared
                        if variant == "ranx-jit":
                            numba_dir = tmp / "numba-empty"
                            shutil.rmtree(numba_dir, ignore_errors=True)
                    r = run_child(tool, variant, col, measures, a.store, tmp, numba_dir)
                    r["timing"]["total"] = r["timing"]["load"] + r["timing"]["eval"]
                    reps[variant].append(r)
                    print(
                        f"   {variant:12s} total {r['timing']['total']:7.2f} s  (load {r['timing']['load']:.2f}, "
                        f"eval {r['timing']['eval']:.2f}), peak {r['timing']['peak_rss_mb']:.0f} MB",
                        flush=True,
                    )
            for variant in variants:
                totals = sorted(x["timing"]["total"] for x in reps[variant])
                best = min(reps[variant], key=lambda x: x["timing"]["total"])
                results[variant] = best
                rows.append(
                    {
                        "collection": col["name"],
                        "variant": variant,
                        **best["timing"],
                        "total_min": totals[0],
                        "total_max": totals[-1],
                        "totals": totals,
                    }
                )
            base = results.get("pytrec_eval")
            for r in rows:
                if base:
                    r["time_ratio"] = f"{r['total'] / base['timing']['total']:.2f}x"
                    r["mem_ratio"] = f"{r['peak_rss_mb'] / base['timing']['peak_rss_mb']:.2f}x"
                else:
                    r["time_ratio"] = r["mem_ratio"] = "-"
            lines, ok = agreement(results, measures)
            evalstore_ok = evalstore_ok and ok
            print()
            print(fmt_table(rows))
            print("\nagreement (means per run and measure):")
            for line in lines:
                print("  " + line)
            all_rows += rows
            all_results[col["name"]] = {
                v: {"timing": r["timing"], "n_topics": r["n_topics"]} for v, r in results.items()
            }
            all_results[col["name"]]["agreement"] = lines
    print(f"\nsummary (best of repetitions; load average at the end {_loadavg()}):")
    print(fmt_table(all_rows))
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": all_rows, "results": all_results, "measures": measures}, indent=1))
    if not evalstore_ok:
        print("\nFAIL: evalstore's means disagree with pytrec_eval's (see above)")
        return 1
    return 0


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _versions(tools) -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("pytrec-eval-terrier", "ranx", "numba"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            pass
    return ", " + ", ".join(out) if out else ""


if __name__ == "__main__":
    sys.exit(main())

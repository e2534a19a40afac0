#!/usr/bin/env python3
"""Collections of every shape, each command a fresh process, side by side with pytrec_eval (and
ranx and ir_measures where they run): wall, CPU and peak RSS, repetitions interleaved.

    python bench/bench_shapes.py [--shapes trec,msmarco,q10k,many,beir,million] [--repeat 3]
                                 [--tools one-shot,dicts,store,evaluator,pytrec_eval,ranx,ir_measures]
                                 [--before CHECKOUT] [--before-max-topics 10000] [--rss-cap-mb 10000]
                                 [--timeout 1200] [--work-dir DIR] [--json OUT]

Shapes (``../shared/tools/gen_synth.py``, generated once into ``--work-dir``, not timed):

=========  ====================================  ====================  ==========
shape      runs x topics x docs                  judged per topic      lines
=========  ====================================  ====================  ==========
trec       100 x 50 x 1,000 (bench_trec's synth)  gen_synth's default   5 M
msmarco    1 x 6,980 x 1,000 (MS MARCO dev)        1, relevant           7 M
q10k       1 x 10,000 x 100                        2 (one relevant ~)    1 M
many       1 x 100,000 x 100                       2                     10 M
beir       10 x 10,000 x 100 (BEIR-like)           10, graded 0-2        10 M
million    1 x 1,000,000 x 10 (stretch)            2                     10 M
=========  ====================================  ====================  ==========

Commands (each a fresh process; wall from a monotonic clock around it, CPU = user + system and
peak RSS from ``wait4``; a watchdog kills a command whose RSS passes ``--rss-cap-mb`` or that runs
past ``--timeout``, and the row says so):

* ``one-shot``: ``python -m evalstore eval QRELS RUN... -m ...`` (no store);
* ``dicts``: a script that reads the files into ``{topic: {doc: value}}`` dicts (plain Python, as
  a notebook would) and calls ``evalstore.evaluate(qrels, runs, metrics)``;
* ``store``: ``ingest qrels``, ``ingest run`` (all runs), ``eval`` into a new store file, summed;
  ``store-again``: ``eval`` once more (every score reused: the re-evaluation of stored runs);
* ``evaluator``: pytrec_eval's ``parse_qrel`` / ``parse_run`` into dicts, one ``evalstore.Evaluator``
  and one pytrec_eval ``RelevanceEvaluator`` over the qrels, and each run's ``evaluate(run)`` timed
  in the process (CPU per call, the two tools' calls interleaved, three each): the Evaluator per
  shape; the process's own wall, CPU and peak are both tools' together;
* ``pytrec_eval``: its ``parse_qrel`` / ``parse_run``, one ``RelevanceEvaluator``, runs one at a
  time; ``ranx``: ``Qrels.from_file`` / ``Run.from_file`` / ``evaluate`` (numba's cache filled by an
  untimed first run); ``ir_measures``: ``read_trec_qrels`` / ``read_trec_run`` /
  ``calc_aggregate``.

``--before CHECKOUT`` adds ``one-shot-before``, ``dicts-before`` and ``store-before``: the same
commands with ``PYTHONPATH=CHECKOUT`` (another commit's code, e.g. a ``git worktree``), in the
same interleaved repetitions, on shapes of at most ``--before-max-topics`` topics.

Metrics: the TREC shape uses bench_trec.py's seven (AP, P@10, nDCG, nDCG@10, RR, Bpref, R@1000),
the others AP, nDCG@10, RR, P@10, R@100. Every evalstore command's means are compared with
pytrec_eval's (1e-9): a disagreement exits with status 1. The load average is printed at the start
of each shape and after each repetition: on a shared machine read CPU beside wall.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_trec import GEN_SYNTH, synth_collection  # noqa: E402

# evalstore name -> (pytrec_eval measure, its result key), ranx name, ir_measures name
SPELLINGS = {
    "AP": ("map", "map", "map", "AP"),
    "P@10": ("P_10", "P_10", "precision@10", "P@10"),
    "nDCG": ("ndcg", "ndcg", "ndcg", "nDCG"),
    "nDCG@10": ("ndcg_cut_10", "ndcg_cut_10", "ndcg@10", "nDCG@10"),
    "RR": ("recip_rank", "recip_rank", "mrr", "RR"),
    "Bpref": ("bpref", "bpref", "bpref", "Bpref"),
    "R@1000": ("recall_1000", "recall_1000", "recall@1000", "R@1000"),
    "R@100": ("recall_100", "recall_100", "recall@100", "R@100"),
}
TREC_METRICS = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "R@1000"]
METRICS = ["AP", "nDCG@10", "RR", "P@10", "R@100"]

SHAPES = {
    # name: (gen_synth arguments, description)
    "msmarco": (["--runs", "1", "--topics", "6980", "--depth", "1000", "--judged", "1", "--grade-probs", "0,1",
                 "--seed", "1"], "1 run x 6,980 topics x 1,000 docs (MS MARCO dev), 1 relevant judged doc a topic"),
    "q10k": (["--runs", "1", "--topics", "10000", "--depth", "100", "--judged", "2", "--seed", "2"],
             "1 run x 10,000 topics x 100 docs, 2 judged docs a topic"),
    "many": (["--runs", "1", "--topics", "100000", "--depth", "100", "--judged", "2", "--seed", "2"],
             "1 run x 100,000 topics x 100 docs, 2 judged docs a topic"),
    "beir": (["--runs", "10", "--topics", "10000", "--depth", "100", "--judged", "10", "--grade-probs",
              "0.5,0.3,0.2", "--seed", "3"], "10 runs x 10,000 topics x 100 docs (BEIR-like), 10 judged docs a topic"),
    "million": (["--runs", "1", "--topics", "1000000", "--depth", "10", "--judged", "2", "--seed", "4"],
                "1 run x 1,000,000 topics x 10 docs (stretch), 2 judged docs a topic"),
}  # fmt: skip
TOPICS = {"trec": 50, "msmarco": 6980, "q10k": 10_000, "many": 100_000, "beir": 10_000, "million": 1_000_000}

PYTREC = r"""
import sys, pytrec_eval
KEYS = {keys!r}
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, set(m for m, _ in KEYS.values()))
for path in sys.argv[2:]:
    with open(path) as f:
        run = pytrec_eval.parse_run(f)
    res = ev.evaluate(run)
    tag = next(iter(open(path))).split()[5]
    print(tag, len(res), *(f"{{m}}={{sum(v[k] for v in res.values()) / len(res)!r}}" for m, (_, k) in KEYS.items()))
"""

DICTS = r"""
import sys, evalstore
METRICS = {metrics!r}
def read(path, kind):
    out = {{}}
    with open(path) as f:
        for line in f:
            x = line.split()
            if kind == "qrels":
                out.setdefault(x[0], {{}})[x[2]] = int(x[3])
            else:
                out.setdefault(x[0], {{}})[x[2]] = float(x[4])
    return out
qrels = read(sys.argv[1], "qrels")
runs = {{next(iter(open(p))).split()[5]: read(p, "run") for p in sys.argv[2:]}}
res = evalstore.evaluate(qrels, runs, METRICS)
for run in runs:
    n = next(n for r, m, v, n in res.means if r == run)
    print(run, n, *(f"{{m}}={{res.mean(run, m)!r}}" for m in METRICS))
"""

EVALUATOR = r"""
import json, sys, time
import evalstore, pytrec_eval
METRICS = {metrics!r}
KEYS = {keys!r}
calls_path, qrels_path, run_paths = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = evalstore.Evaluator(qrels, METRICS)
pt = pytrec_eval.RelevanceEvaluator(qrels, set(m for m, _ in KEYS.values()))
calls = {{"A": [], "B": []}}
for path in run_paths:
    with open(path) as f:
        run = pytrec_eval.parse_run(f)
    for _ in range(3):  # interleaved: evalstore's call, then pytrec_eval's, on the same dicts
        for side, fn in (("A", ev.evaluate), ("B", pt.evaluate)):
            c = time.process_time()
            res = fn(run)
            calls[side].append(time.process_time() - c)
    res = ev.evaluate(run)
    tag = next(iter(open(path))).split()[5]
    print(tag, len(res), *(f"{{m}}={{sum(v[m] for v in res.values()) / len(res)!r}}" for m in METRICS))
with open(calls_path, "a") as f:
    f.write(json.dumps(calls) + "\n")
"""

RANX = r"""
import sys
from ranx import Qrels, Run, evaluate
KEYS = {keys!r}
qrels = Qrels.from_file(sys.argv[1], kind="trec")
for path in sys.argv[2:]:
    run = Run.from_file(path, kind="trec")
    res = evaluate(qrels, run, list(KEYS.values()))
    res = res if isinstance(res, dict) else {{list(KEYS.values())[0]: res}}
    tag = next(iter(open(path))).split()[5]
    print(tag, len(run), *(f"{{m}}={{float(res[k])!r}}" for m, k in KEYS.items()))
"""

IRM = r"""
import sys, ir_measures
KEYS = {keys!r}
measures = {{m: ir_measures.parse_measure(k) for m, k in KEYS.items()}}
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
for path in sys.argv[2:]:
    agg = ir_measures.calc_aggregate(list(measures.values()), qrels, ir_measures.read_trec_run(path))
    tag = next(iter(open(path))).split()[5]
    print(tag, 0, *(f"{{m}}={{float(agg[measures[m]])!r}}" for m in KEYS))
"""


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def collection(work: Path, shape: str) -> dict:
    if shape == "trec":
        col = synth_collection(work)
        if col is None:
            raise SystemExit("the trec shape needs ../shared/tools/gen_synth.py")
        col["describe"] = "100 runs x 50 topics x 1,000 docs (bench_trec.py's synthetic collection)"
        col["name"] = "trec"
        return col
    args, describe = SHAPES[shape]
    out = work / f"shape-{shape}"
    if not (out / "manifest.json").exists():
        print(f"generating {shape} into {out} (once; not timed) ...", flush=True)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, str(GEN_SYNTH), "--out", str(out), *args, "--quiet"], check=True)
    runs = sorted(str(p) for p in (out / "runs").glob("*.txt"))
    return {"name": shape, "qrels": str(out / "qrels.txt"), "runs": runs, "describe": describe}


CWD = [tempfile.gettempdir()]  # the commands' working directory (main sets --work-dir)


class Failed(Exception):
    pass


def timed(cmd: list[str], out: Path | None, env: dict | None, cap_mb: float, timeout: float) -> dict:
    """Run ``cmd``; its wall and CPU seconds and peak RSS (MB). A watchdog kills it past ``cap_mb``
    of resident memory or ``timeout`` seconds (Failed says which)."""
    stdout = open(out, "w") if out else subprocess.DEVNULL  # noqa: SIM115
    killed: list[str] = []
    try:
        t0 = time.perf_counter()
        # cwd: not a checkout, whose evalstore/ ``python -m`` would import before PYTHONPATH's
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env, start_new_session=True, cwd=CWD[0])
        done = threading.Event()

        def watch() -> None:
            while not done.wait(0.1):
                try:
                    with open(f"/proc/{proc.pid}/status") as f:
                        rss = next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS")) / 1024
                except (OSError, StopIteration):
                    rss = 0
                why = f"RSS past {cap_mb:.0f} MB" if rss > cap_mb else None
                if time.perf_counter() - t0 > timeout:
                    why = f"past {timeout:.0f} s"
                if why:
                    killed.append(why)
                    os.killpg(proc.pid, signal.SIGKILL)
                    return

        threading.Thread(target=watch, daemon=True).start()
        err = proc.stderr.read() if proc.stderr else b""
        _, status, ru = os.wait4(proc.pid, 0)
        done.set()
        wall = time.perf_counter() - t0
    finally:
        if out:
            stdout.close()
    code = os.waitstatus_to_exitcode(status)
    if killed:
        raise Failed(f"killed: {killed[0]} (peak {ru.ru_maxrss / 1024:.0f} MB)")
    if code != 0:
        raise Failed(f"exit {code}: {err.decode(errors='replace').strip().splitlines()[-1:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024}


def compiled(*checkouts: str | None) -> None:
    """Byte-compile evalstore (the imported one and each checkout's) before anything is timed, as an
    installed package is: with ``PYTHONDONTWRITEBYTECODE`` set, or a module changed since its
    ``.pyc``, every command would compile those modules again (0.3-0.4 CPU-s of each start)."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("evalstore")
    dirs = [str(Path(spec.origin).parent)] if spec and spec.origin else []
    dirs += [str(Path(c) / "evalstore") for c in checkouts if c and (Path(c) / "evalstore").is_dir()]
    for d in dirs:
        compileall.compile_dir(d, quiet=1)


def summed(parts: list[dict]) -> dict:
    return {"wall": sum(p["wall"] for p in parts), "cpu": sum(p["cpu"] for p in parts),
            "peak_mb": max(p["peak_mb"] for p in parts), "parts": parts}  # fmt: skip


def means_of(path: Path, kind: str) -> dict[str, dict[str, float]]:
    """``{run: {metric: mean}}`` of a command's output: evalstore's CSV or the scripts' lines."""
    lines = path.read_text().splitlines()
    out: dict[str, dict[str, float]] = {}
    if kind == "csv":
        head = lines[0].split(",")
        for ln in lines[1:]:
            row = dict(zip(head, ln.split(",")))
            out[row["run"]] = {m: float(v) for m, v in row.items() if m in SPELLINGS}
        return out
    for ln in lines:
        f = ln.split()
        out[f[0]] = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in f[2:]}
    return out


def agree(got: dict, ref: dict, tol: float = 1e-9) -> tuple[bool, float]:
    worst = 0.0
    if set(got) != set(ref):
        return False, float("inf")
    for run, vals in ref.items():
        for m, v in vals.items():
            worst = max(worst, abs(got[run].get(m, float("inf")) - v))
    return worst <= tol, worst


def jobs_for(col: dict, tools: list[str], before: str | None, before_ok: bool, work: Path) -> list[tuple[str, object]]:
    metrics = TREC_METRICS if col["name"] == "trec" else METRICS
    margs = [a for m in metrics for a in ("-m", m)]
    keys_pt = {m: SPELLINGS[m][:2] for m in metrics}
    scripts = {
        "pytrec_eval": PYTREC.format(keys=keys_pt),
        "dicts": DICTS.format(metrics=metrics),
        "evaluator": EVALUATOR.format(metrics=metrics, keys=keys_pt),
        "ranx": RANX.format(keys={m: SPELLINGS[m][2] for m in metrics}),
        "ir_measures": IRM.format(keys={m: SPELLINGS[m][3] for m in metrics}),
    }
    paths = {}
    for name, text in scripts.items():
        paths[name] = work / f"job_{name}.py"
        paths[name].write_text(text)
    py = sys.executable
    variants = [("", None)] + ([("-before", before)] if before and before_ok else [])
    jobs: list[tuple[str, object]] = []
    for tool in tools:
        if tool in ("one-shot", "dicts", "store"):
            for suffix, pythonpath in variants:
                env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
                if tool == "one-shot":
                    cmd = [py, "-m", "evalstore", "eval", col["qrels"], *col["runs"], *margs, "--format", "csv"]
                    jobs.append((tool + suffix, ("cmd", cmd, env, "csv")))
                elif tool == "dicts":
                    cmd = [py, str(paths["dicts"]), col["qrels"], *col["runs"]]
                    jobs.append((tool + suffix, ("cmd", cmd, env, "lines")))
                else:
                    jobs.append((tool + suffix, ("store", margs, env)))
        elif tool == "evaluator":
            calls = work / f"evaluator_calls_{col['name']}.jsonl"
            calls.unlink(missing_ok=True)
            cmd = [py, str(paths[tool]), str(calls), col["qrels"], *col["runs"]]
            jobs.append((tool, ("cmd", cmd, None, "lines")))
        elif tool in scripts:
            jobs.append((tool, ("cmd", [py, str(paths[tool]), col["qrels"], *col["runs"]], None, "lines")))
    return jobs


def run_store(col: dict, margs: list[str], env, tmp: Path, out: Path, cap: float, timeout: float) -> tuple[dict, dict]:
    db = tmp / "bench.duckdb"
    for suffix in ("", ".wal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    shutil.rmtree(str(db) + ".tmp", ignore_errors=True)
    es = [sys.executable, "-m", "evalstore", "--db", str(db)]
    first = summed([
        timed([*es, "ingest", "qrels", col["qrels"]], None, env, cap, timeout),
        timed([*es, "ingest", "run", *col["runs"]], None, env, cap, timeout),
        timed([*es, "eval", *margs, "--format", "csv"], out, env, cap, timeout),
    ])  # fmt: skip
    again = timed([*es, "eval", *margs, "--format", "csv"], None, env, cap, timeout)
    return first, again


def stats(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def bench_shape(col: dict, a, work: Path, record: dict) -> bool:
    n_topics = TOPICS[col["name"]]
    tools = a.tools.split(",")
    jobs = jobs_for(col, tools, a.before, n_topics <= a.before_max_topics, work)
    print(f"\n== {col['name']}: {col['describe']}; load average {loadavg()}", flush=True)
    results: dict[str, list[dict]] = {}
    failures: dict[str, str] = {}
    ok = True
    if "ranx" in tools:  # numba compiles on first use: fill its cache, untimed
        os.environ.setdefault("NUMBA_CACHE_DIR", str(work / "numba-cache"))
    with tempfile.TemporaryDirectory(dir=work) as tmp_s:
        tmp = Path(tmp_s)
        for rep in range(a.repeat + (1 if "ranx" in tools else 0)):
            warm = "ranx" in tools and rep == 0
            for name, job in jobs:
                if name in failures or (warm and name != "ranx"):
                    continue
                out = tmp / f"{name}.out"
                try:
                    if job[0] == "store":
                        r, again = run_store(col, job[1], job[2], tmp, out, a.rss_cap_mb, a.timeout)
                        if not warm:
                            results.setdefault(name + "-again", []).append(again)
                    else:
                        r = timed(job[1], out, job[2], a.rss_cap_mb, a.timeout)
                except Failed as e:
                    failures[name] = str(e)
                    print(f"  {name:18s} FAILED {e}", flush=True)
                    continue
                if warm:
                    continue
                results.setdefault(name, []).append(r)
                line = f"wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s  peak {r['peak_mb']:6.0f} MB"
                print(f"  {name:18s} {line}", flush=True)
                kind = "lines" if job[0] == "cmd" and job[3] == "lines" else "csv"
                (tmp / f"{name}.means.json").write_text(json.dumps(means_of(out, kind)))
            print(f"  (repetition done; load average {loadavg()})", flush=True)
        ref_path = tmp / "pytrec_eval.means.json"
        agreement = {}
        if ref_path.exists():
            ref = json.loads(ref_path.read_text())
            for name in results:
                p = tmp / f"{name}.means.json"
                if name == "pytrec_eval" or not p.exists():
                    continue
                good, worst = agree(json.loads(p.read_text()), ref)
                agreement[name] = {"agree": good, "max_diff": worst}
                evalstore_cmd = not name.startswith(("ranx", "ir_measures"))
                print(f"  agreement with pytrec_eval, {name}: {'AGREE' if good else 'DIFFER'} (max |diff| {worst:.1e})")
                ok = ok and (good or not evalstore_cmd)
    print(f"\n  load average at the end {loadavg()}")
    print(f"  {'command':18s} {'wall s min/med/max':>22s} {'cpu s min/med/max':>22s} {'peak MB':>8s}", end="")
    print(f" {'wall x':>7s} {'cpu x':>6s}")
    ref = results.get("pytrec_eval")
    rows = []
    for name, rs in results.items():
        w, c, m = stats([r["wall"] for r in rs]), stats([r["cpu"] for r in rs]), max(r["peak_mb"] for r in rs)
        wr = cr = ""
        if ref and name != "pytrec_eval":
            wr = f"{w[1] / statistics.median(r['wall'] for r in ref):.2f}"
            cr = f"{c[1] / statistics.median(r['cpu'] for r in ref):.2f}"
        print(f"  {name:18s} {w[0]:6.2f}/{w[1]:6.2f}/{w[2]:6.2f}   {c[0]:6.2f}/{c[1]:6.2f}/{c[2]:6.2f}", end="")
        print(f"   {m:8.0f} {wr:>7s} {cr:>6s}")
        rows.append({"command": name, "runs": rs, "wall_ratio": wr, "cpu_ratio": cr})
    for name, why in failures.items():
        print(f"  {name:18s} FAILED: {why}")
    calls = _evaluator_calls(work / f"evaluator_calls_{col['name']}.jsonl")
    if calls:
        rows.append({"command": "evaluator-calls", **calls})
    record["shapes"].append({"shape": col["name"], "describe": col["describe"], "rows": rows, "failures": failures,
                             "agreement": agreement, "load_end": loadavg()})  # fmt: skip
    return ok


def _evaluator_calls(path: Path) -> dict | None:
    """The ``evaluator`` tool's calls, in process: ``Evaluator.evaluate(run)`` (A) beside pytrec_eval's
    ``RelevanceEvaluator.evaluate(run)`` (B) on the same dicts, CPU seconds per call, interleaved."""
    if not path.exists():
        return None
    a, b = [], []
    for line in path.read_text().splitlines():
        got = json.loads(line)
        a += got["A"]
        b += got["B"]
    ratio = statistics.median(a) / statistics.median(b)
    print(f"  Evaluator.evaluate per call, CPU s min/med/max {stats(a)[0]:.3f}/{stats(a)[1]:.3f}/{stats(a)[2]:.3f};"
          f" pytrec_eval's {stats(b)[0]:.3f}/{stats(b)[1]:.3f}/{stats(b)[2]:.3f}; ratio {ratio:.2f}x")  # fmt: skip
    return {"A_cpu": a, "B_cpu": b, "cpu_ratio": ratio}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="trec,msmarco,q10k,many,beir,million")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default="one-shot,dicts,store,evaluator,pytrec_eval,ranx,ir_measures")
    ap.add_argument("--before", help="a checkout of other code to time beside (PYTHONPATH)")
    ap.add_argument("--before-max-topics", type=int, default=10_000)
    ap.add_argument("--rss-cap-mb", type=float, default=10_000)
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    CWD[0] = str(work)
    compiled(a.before)
    record: dict = {"load_start": loadavg(), "args": vars(a), "shapes": []}
    print(f"load average at start {loadavg()}; {os.cpu_count()} cores; repeat {a.repeat}; before: {a.before or '-'}")
    ok = True
    for shape in a.shapes.split(","):
        ok = bench_shape(collection(work, shape), a, work, record) and ok
        if a.json:
            Path(a.json).write_text(json.dumps(record, indent=1))
    if not ok:
        print("\nFAIL: an evalstore command's means differ from pytrec_eval's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

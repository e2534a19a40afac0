#!/usr/bin/env python3
"""Every row of issue 42's table in one interleaved run: each evalstore path beside the tool or the
plain pass it is held against, CPU seconds (user + system) beside wall time, peak RSS.

    python bench/bench_targets.py [--rows ROW,...] [--repeat 3] [--before CHECKOUT [--before-python PY]]
                                  [--work-dir DIR] [--json OUT]

Rows (``--rows``, default all; shapes from ``bench_shapes.py``, generated once, not timed):

==============  ============================================================  =========================
row             A (evalstore) against B                                       target
==============  ============================================================  =========================
store           ``ingest qrels`` + ``ingest run`` (100 files) + ``eval``,      A/B <= 0.7
                TREC shape (100 x 50 x 1,000, 7 measures), against the
                pytrec_eval script of bench_shapes.py
ingest-dl20     ``ingest run`` of the 59 TREC DL 2020 runs (3.1 M lines, gz)   A/B <= 1.0
                into a new store, against a plain Python parse of the same
                files (gunzip, split, float/int per line, dicts)
oneshot-q10k    ``evalstore eval QRELS RUN`` (no store), 10,000 x 100, against  CPU A/B <= 0.7
                the pytrec_eval script
oneshot-million the same, 1,000,000 topics x 10                                 CPU A/B <= 0.7, A <= 1 GB
dicts-many      files read into dicts in Python, ``evalstore.evaluate(dicts)``, A/B <= 1.0, A - dicts <= 1 GB
                100,000 x 100, against the same reading + pytrec_eval's
                ``RelevanceEvaluator`` on the same dicts
again-trec      ``eval`` of a stored TREC collection again (every score         A/B <= 0.3
                reused), against ``eval --recompute`` (the first evaluation's
                work)
again-many      the same, 100,000 x 100                                       A/B <= 0.3
evaluator       ``Evaluator.evaluate(run)`` per call, 1,000 topics x 100,      A/B <= 1.0
                against pytrec_eval's ``evaluate(run)`` (in one process,
                rounds interleaved, CPU ms per call)
ndpm            ``store.evaluate(NDPM)`` against ``ADM`` on TREC DL 2020's 59    A/B <= 1.0
                runs (one process, rounds interleaved: the ratio of the
                medians and the median of the pairs' ratios)
all77           every metric of ranked lists (one default name each; not the   completes within the
                answers' metrics) in memory on TREC DL 2019, ``threads=2``,    default memory limit
                default memory limit
floor           a plain C pass (bench/floor.c, built here with gcc: read,      ns per line beside each
                split, parse, AP and nDCG@10) over each shape's files           path's
==============  ============================================================  =========================

Whole commands are fresh processes, A and B in turn (A B A B ...); wall from a monotonic clock,
CPU and peak RSS from ``wait4``. The in-process rows run their own interleaved rounds in a child
process. The load average is printed with every row: on a shared machine compare CPU.

``--before CHECKOUT`` adds A0: the same evalstore commands with ``PYTHONPATH=CHECKOUT`` (another
commit's code, e.g. ``git archive main | tar -x -C DIR``), in the same rotation (A A0 B A A0 B ...),
with its own store files; the in-process rows alternate a child process of each code, and each row
prints A0/B beside A/B: before and after in one interleaved run. ``--before-python PYTHON`` runs A0
under another interpreter: a virtual environment with the dependencies the before was installed
with (a change of a dependency's version is then part of before and after, as for a user).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_shapes import (  # noqa: E402
    METRICS,
    PYTREC,
    SPELLINGS,
    TREC_METRICS,
    Failed,
    collection,
    loadavg,
    timed,
)
from bench_trec import DL19_DIR, SHARED  # noqa: E402

DL20_DIR = SHARED / "data" / "trec-dl-2020-passage"
ROWS = ("store", "ingest-dl20", "oneshot-q10k", "oneshot-million", "dicts-many", "again-trec", "again-many",
        "evaluator", "ndpm", "all77", "floor")  # fmt: skip

PARSE = r"""
import gzip, sys
runs = {}
for path in sys.argv[1:]:
    run = {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            t, _, d, r, s, tag = line.split()
            run.setdefault(t, {})[d] = (int(r), float(s))
    runs[path] = run
print(sum(len(d) for r in runs.values() for d in r.values()))
"""

READ = r"""
import sys
def read(path, kind):
    out = {}
    with open(path) as f:
        for line in f:
            x = line.split()
            if kind == "qrels":
                out.setdefault(x[0], {})[x[2]] = int(x[3])
            else:
                out.setdefault(x[0], {})[x[2]] = float(x[4])
    return out
qrels = read(sys.argv[1], "qrels")
runs = {next(iter(open(p))).split()[5]: read(p, "run") for p in sys.argv[2:]}
"""

# (READ is not a template: the rows' scripts are READ + a tail formatted with its values)
DICTS_EVALSTORE = r"""
import evalstore
METRICS = {metrics!r}
res = evalstore.evaluate(qrels, runs, METRICS)
for run in runs:
    print(run, *(f"{{m}}={{res.mean(run, m)!r}}" for m in METRICS))
"""

DICTS_PYTREC = r"""
import pytrec_eval
KEYS = {keys!r}
ev = pytrec_eval.RelevanceEvaluator(qrels, set(m for m, _ in KEYS.values()))
for tag, run in runs.items():
    res = ev.evaluate(run)
    print(tag, *(f"{{m}}={{sum(v[k] for v in res.values()) / len(res)!r}}" for m, (_, k) in KEYS.items()))
"""

EVALUATOR = r"""
import json, random, statistics, sys, time
import evalstore, pytrec_eval
topics, docs, rounds, calls = (int(x) for x in sys.argv[1:5])
rnd = random.Random(0)
qrels = {f"q{t}": {f"d{d}": rnd.choice([0, 0, 1, 2]) for d in range(0, 2 * docs, 3)} for t in range(topics)}
run = {f"q{t}": {f"d{d}": rnd.random() for d in range(docs)} for t in range(topics)}
ev = evalstore.Evaluator(qrels, ["nDCG@10", "AP"])
pt = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "map"})
a, b = ev.evaluate(run), pt.evaluate(run)
assert all(abs(a[t]["nDCG@10"] - b[t]["ndcg_cut_10"]) < 1e-9 and abs(a[t]["AP"] - b[t]["map"]) < 1e-9 for t in b)
out = {"A": {"cpu": [], "wall": []}, "B": {"cpu": [], "wall": []}}
for _ in range(rounds):
    for name, fn in (("A", lambda: ev.evaluate(run)), ("B", lambda: pt.evaluate(run))):
        fn()
        c, w = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        out[name]["cpu"].append((time.process_time() - c) / calls)
        out[name]["wall"].append((time.perf_counter() - w) / calls)
print(json.dumps(out))
"""

NDPM = r"""
import glob, json, sys, time
import evalstore
d, rounds = sys.argv[1], int(sys.argv[2])
s = evalstore.open(":memory:")
s.ingest_qrels(d + "/qrels.txt", name="dl20", progress=False)
s.ingest_run(sorted(glob.glob(d + "/runs/*")), progress=False)
out = {"A": {"cpu": [], "wall": []}, "B": {"cpu": [], "wall": []}}
for m in ("NDPM", "ADM"):
    s.evaluate("dl20", None, [m], save=False, progress=False)  # warm: compiled, cached
for _ in range(rounds):
    for name, m in (("A", "NDPM"), ("B", "ADM")):
        c, w = time.process_time(), time.perf_counter()
        s.evaluate("dl20", None, [m], save=False, progress=False)
        out[name]["cpu"].append(time.process_time() - c)
        out[name]["wall"].append(time.perf_counter() - w)
print(json.dumps(out))
"""

ALL = r"""
import glob, json, resource, sys, time
import evalstore
from evalstore.metrics import registry
d = sys.argv[1]
names = []
for spec in registry.all_metrics():
    if spec.kind != "judgments":  # metrics of generated answers (docs/rag.md): not of ranked lists
        continue
    for name in (spec.name, spec.name + "@10", spec.name + "@0.5", spec.name + "(mult=0.5)",
                 spec.name + "(max_rel=3)", spec.name + "(max_rel=3)@10"):
        try:
            registry.parse_metric(name)
        except evalstore.MetricError:
            continue
        names.append(name)
        break
c, w = time.process_time(), time.perf_counter()
res = evalstore.evaluate(d + "/qrels.txt", sorted(glob.glob(d + "/runs/*")), names, threads=2)
print(json.dumps({"metrics": len(names), "means": len(res.means), "cpu": time.process_time() - c,
                  "wall": time.perf_counter() - w}))
"""


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def rng(xs: list[float], digits: int = 2) -> str:
    return f"{min(xs):.{digits}f}/{med(xs):.{digits}f}/{max(xs):.{digits}f}"


def lines_of(paths: list[str]) -> int:
    n = 0
    for p in paths:
        with open(p, "rb") as f:
            n += sum(chunk.count(b"\n") for chunk in iter(lambda f=f: f.read(1 << 22), b""))
    return n


class Bench:
    def __init__(self, a) -> None:
        self.a = a
        self.work = Path(a.work_dir)
        self.work.mkdir(parents=True, exist_ok=True)
        self.py = sys.executable
        self.rows: list[dict] = []

    def script(self, name: str, text: str) -> str:
        path = self.work / f"target_{name}.py"
        path.write_text(text)
        return str(path)

    def env(self, side: str) -> dict | None:
        """The environment of an evalstore command: A0 runs the ``--before`` checkout's code."""
        return dict(os.environ, PYTHONPATH=self.a.before) if side == "A0" else None

    def sides(self) -> tuple[str, ...]:
        return ("A", "A0", "B") if self.a.before else ("A", "B")

    def pairs(self, name: str, a_fn, b_fn, target: str, goal: float | None, note: str = "") -> None:
        """A (A0) and B in turn, --repeat times each: their wall, CPU and peak; the ratio of the
        medians. ``a_fn(side)`` runs evalstore's command for side A or A0."""
        print(f"\n== {name}: {note} (load {loadavg()})", flush=True)
        got: dict[str, list[dict]] = {side: [] for side in self.sides()}
        for _ in range(self.a.repeat):
            for side in self.sides():
                fn = b_fn if side == "B" else (lambda side=side: a_fn(side))
                try:
                    r = fn()
                except Failed as e:
                    print(f"  {side} FAILED {e}", flush=True)
                    self.rows.append({"row": name, "failed": f"{side}: {e}", "target": target})
                    return
                got[side].append(r)
                print(
                    f"  {side:2s} wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s  peak {r['peak_mb']:6.0f} MB",
                    flush=True,
                )
        self.report(name, got, target, goal, note)

    def report(self, name: str, got: dict, target: str, goal: float | None, note: str, unit: str = "s") -> None:
        a, b = got["A"], got["B"]
        wr = med([r["wall"] for r in a]) / med([r["wall"] for r in b])
        cr = med([r["cpu"] for r in a]) / med([r["cpu"] for r in b])
        row = {"row": name, "note": note, "target": target, "A": a, "B": b, "wall_ratio": wr, "cpu_ratio": cr,
               "load": loadavg()}  # fmt: skip
        met = "" if goal is None else ("met" if cr <= goal else "MISSED")
        peak = f"peak A {max(r.get('peak_mb', 0) for r in a):.0f} / B {max(r.get('peak_mb', 0) for r in b):.0f} MB"
        print(f"  A wall {rng([r['wall'] for r in a])} cpu {rng([r['cpu'] for r in a])} {unit}; "
              f"B wall {rng([r['wall'] for r in b])} cpu {rng([r['cpu'] for r in b])} {unit}; {peak}")  # fmt: skip
        print(f"  A/B wall {wr:.2f}x  cpu {cr:.2f}x  target {target}  {met}", flush=True)
        if got.get("A0"):
            a0 = got["A0"]
            row["A0"] = a0
            row["before_wall_ratio"] = med([r["wall"] for r in a0]) / med([r["wall"] for r in b])
            row["before_cpu_ratio"] = med([r["cpu"] for r in a0]) / med([r["cpu"] for r in b])
            print(f"  A0 (before) wall {rng([r['wall'] for r in a0])} cpu {rng([r['cpu'] for r in a0])} {unit}; "
                  f"peak {max(r.get('peak_mb', 0) for r in a0):.0f} MB; A0/B wall {row['before_wall_ratio']:.2f}x  "
                  f"cpu {row['before_cpu_ratio']:.2f}x", flush=True)  # fmt: skip
        self.rows.append(row)

    # ------------------------------------------------------------------ the rows
    def python(self, side: str) -> str:
        """The interpreter of a side: A0's is ``--before-python`` when given (the before's own
        installed dependencies), else this one."""
        return self.a.before_python if side == "A0" and self.a.before_python else self.py

    def cmd(self, args: list[str], out: Path | None = None, side: str = "A") -> dict:
        if args and args[0] == self.py:  # each side's evalstore command runs under its interpreter
            args = [self.python(side), *args[1:]]
        return timed(args, out, self.env(side), self.a.rss_cap_mb, self.a.timeout)

    def store_row(self) -> None:
        col = collection(self.work, "trec")
        margs = [x for m in TREC_METRICS for x in ("-m", m)]
        pt = self.script("pytrec_trec", PYTREC.format(keys={m: SPELLINGS[m][:2] for m in TREC_METRICS}))

        def a(side: str) -> dict:
            db = self.work / f"target_store_{side}.duckdb"
            _fresh(db)
            es = [self.py, "-m", "evalstore", "--db", str(db)]
            parts = [self.cmd([*es, "ingest", "qrels", col["qrels"]], side=side),
                     self.cmd([*es, "ingest", "run", *col["runs"]], side=side),
                     self.cmd([*es, "eval", *margs, "--format", "csv"], side=side)]  # fmt: skip
            return {k: sum(p[k] for p in parts) if k != "peak_mb" else max(p[k] for p in parts) for k in parts[0]}

        self.pairs("store", a, lambda: self.cmd([self.py, pt, col["qrels"], *col["runs"]]), "<= 0.7x", 0.7,
                   "ingest qrels + ingest run + eval, 100 x 50 x 1,000, 7 measures, vs pytrec_eval")  # fmt: skip

    def ingest_row(self) -> None:
        runs = sorted(glob.glob(str(DL20_DIR / "runs" / "*")))
        if not runs:
            print("\n== ingest-dl20: skipped (../shared/data/trec-dl-2020-passage absent)")
            return
        parse = self.script("parse", PARSE)

        def a(side: str) -> dict:
            db = self.work / f"target_ingest_{side}.duckdb"
            _fresh(db)
            return self.cmd([self.py, "-m", "evalstore", "--db", str(db), "ingest", "run", *runs], side=side)

        self.pairs("ingest-dl20", a, lambda: self.cmd([self.py, parse, *runs]), "<= 1.0x", 1.0,
                   f"ingest run of {len(runs)} TREC DL 2020 runs vs a plain Python parse")  # fmt: skip

    def oneshot_row(self, shape: str) -> None:
        col = collection(self.work, shape)
        margs = [x for m in METRICS for x in ("-m", m)]
        pt = self.script("pytrec", PYTREC.format(keys={m: SPELLINGS[m][:2] for m in METRICS}))
        one = [self.py, "-m", "evalstore", "eval", col["qrels"], *col["runs"], *margs, "--format", "csv"]
        ref = [self.py, pt, col["qrels"], *col["runs"]]
        self.pairs(f"oneshot-{shape}", lambda side: self.cmd(one, side=side), lambda: self.cmd(ref),
                   "CPU <= 0.7x" + (", peak <= 1 GB" if shape == "million" else ""), 0.7,
                   f"eval QRELS RUN (no store), {col['describe']}")  # fmt: skip

    def dicts_row(self) -> None:
        col = collection(self.work, "many")
        es = self.script("dicts_evalstore", READ + DICTS_EVALSTORE.format(metrics=METRICS))
        pt = self.script("dicts_pytrec", READ + DICTS_PYTREC.format(keys={m: SPELLINGS[m][:2] for m in METRICS}))
        self.pairs("dicts-many", lambda side: self.cmd([self.py, es, col["qrels"], *col["runs"]], side=side),
                   lambda: self.cmd([self.py, pt, col["qrels"], *col["runs"]]), "<= 1.0x", 1.0,
                   "dicts read in Python: evaluate(dicts) vs pytrec_eval, 1 x 100,000 x 100")  # fmt: skip

    def again_row(self, shape: str) -> None:
        col = collection(self.work, shape)
        metrics = TREC_METRICS if shape == "trec" else METRICS
        margs = [x for m in metrics for x in ("-m", m)]
        es = {}
        for side in self.sides()[:-1]:  # a store of each code (A0: the --before checkout's)
            db = self.work / f"target_again_{shape}_{side}.duckdb"
            _fresh(db)
            es[side] = [self.python(side), "-m", "evalstore", "--db", str(db)]
            for step in (["ingest", "qrels", col["qrels"]], ["ingest", "run", *col["runs"]], ["eval", *margs]):
                subprocess.run([*es[side], *step], check=True, capture_output=True, cwd=self.work,
                               env=self.env(side))  # fmt: skip
        # each code against its own --recompute: A/B after, then (--before) A0/B0 before
        plain = Bench(argparse.Namespace(**{**vars(self.a), "before": None}))
        for side in self.sides()[:-1]:
            tag = "" if side == "A" else " (before: the --before checkout's code and store)"
            plain.pairs(f"again-{shape}" + ("" if side == "A" else "-before"),
                        lambda _s, side=side: self.cmd([*es[side], "eval", *margs, "--format", "csv"], side=side),
                        lambda side=side: self.cmd([*es[side], "eval", *margs, "--recompute", "--format", "csv"],
                                                   side=side),
                        "<= 0.3x", 0.3, f"eval again (all reused) vs --recompute, {col['describe']}{tag}")  # fmt: skip
        self.rows.extend(plain.rows)

    def in_process(self, name: str, text: str, args: list[str], target: str, goal: float, note: str) -> None:
        """A child process runs the interleaved rounds (A B A B ...) of ``text``; with ``--before``
        a child of each code in turn (after, before, after, before): A0/B0 is the before's ratio."""
        print(f"\n== {name}: {note} (load {loadavg()})", flush=True)
        path = self.script(name, text)
        got: dict[str, list[dict]] = {"A": [], "B": [], "A0": [], "B0": []}
        scale = 1000 if name == "evaluator" else 1
        for _ in range(2 if self.a.before else 1):
            for side in self.sides()[:-1]:
                try:
                    out = subprocess.run([self.python(side), path, *args], check=True, capture_output=True, text=True,
                                         cwd=self.work, env=self.env(side))  # fmt: skip
                except subprocess.CalledProcessError as e:
                    print(f"  {side} FAILED {e.stderr.strip().splitlines()[-1:]}")
                    self.rows.append({"row": name, "failed": f"{side}: {e.stderr[-500:]}", "target": target})
                    return
                res = json.loads(out.stdout.strip().splitlines()[-1])
                for x, key in (("A", side), ("B", "B" if side == "A" else "B0")):
                    got[key] += [{"cpu": c * scale, "wall": w * scale} for c, w in zip(res[x]["cpu"], res[x]["wall"])]
        unit = "ms per call" if name == "evaluator" else "s"
        self.report(name, {"A": got["A"], "B": got["B"]}, target, goal, note, unit)
        pairs = [x["cpu"] / y["cpu"] for x, y in zip(got["A"], got["B"])]
        print(f"  median of the pairs' CPU ratios {med(pairs):.2f}x (range {min(pairs):.2f}-{max(pairs):.2f})")
        self.rows[-1]["pair_ratio"] = med(pairs)
        if got["A0"]:
            a0, b0 = got["A0"], got["B0"]
            pairs0 = [x["cpu"] / y["cpu"] for x, y in zip(a0, b0)]
            ratio0 = med([r["cpu"] for r in a0]) / med([r["cpu"] for r in b0])
            print(f"  A0 (before) cpu {rng([r['cpu'] for r in a0])}, its B0 {rng([r['cpu'] for r in b0])} {unit}; "
                  f"A0/B0 cpu {ratio0:.2f}x, median of the pairs {med(pairs0):.2f}x", flush=True)  # fmt: skip
            self.rows[-1].update({"A0": a0, "B0": b0, "before_cpu_ratio": ratio0, "before_pair_ratio": med(pairs0)})

    def all77_row(self) -> None:
        print(f"\n== all77: every metric in memory, DL 2019, threads=2, default memory limit (load {loadavg()})")
        path = self.script("all77", ALL)
        for side in self.sides()[:-1]:
            label = "" if side == "A" else " (before)"
            out = self.work / f"all77_{side}.out"
            try:
                r = self.cmd([self.py, path, str(DL19_DIR)], out, side)
            except Failed as e:
                print(f"  {side}{label} FAILED {e}")
                self.rows.append({"row": "all77" + label, "failed": str(e), "target": "completes"})
                continue
            got = json.loads(out.read_text().strip().splitlines()[-1])
            print(f"  {side}{label} completed: {got['metrics']} names, {got['means']} means; "
                  f"wall {r['wall']:.1f} s, cpu {r['cpu']:.1f} s, peak {r['peak_mb']:.0f} MB")  # fmt: skip
            self.rows.append({"row": "all77" + label, "result": got, "process": r, "target": "completes",
                              "load": loadavg()})  # fmt: skip

    def floor_row(self) -> None:
        exe = self.work / "floor"
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(HERE / "floor.c"), "-lm"], check=True)
        print(f"\n== floor: bench/floor.c (gcc -O2: read, split, parse, AP and nDCG@10) (load {loadavg()})")
        for shape in self.a.floor_shapes.split(","):
            col = collection(self.work, shape)
            n = lines_of(col["runs"])
            rs = [self.cmd([str(exe), col["qrels"], *col["runs"]]) for _ in range(self.a.repeat)]
            cpu = med([r["cpu"] for r in rs])
            walls, cpus = [r["wall"] for r in rs], [r["cpu"] for r in rs]
            print(f"  {shape:8s} {n:>10,d} lines  wall {rng(walls)} cpu {rng(cpus)} s "
                  f"= {cpu / n * 1e9:6.0f} ns/line (CPU)  peak {max(r['peak_mb'] for r in rs):.0f} MB")  # fmt: skip
            self.rows.append({"row": f"floor-{shape}", "lines": n, "runs": rs, "ns_per_line": cpu / n * 1e9})


def _fresh(db: Path) -> None:
    for suffix in ("", ".wal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    shutil.rmtree(str(db) + ".tmp", ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floor-shapes", default="trec,q10k,many,million")
    ap.add_argument("--before", help="a checkout of other code to time beside as A0 (PYTHONPATH)")
    ap.add_argument(
        "--before-python",
        help="the interpreter of A0 (a virtual environment with the "
        "dependencies the --before checkout was installed with); default: this one",
    )
    ap.add_argument("--rss-cap-mb", type=float, default=10_000)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    b = Bench(a)
    import bench_shapes

    bench_shapes.CWD[0] = str(b.work)
    bench_shapes.compiled(a.before)
    print(f"load average at start {loadavg()}; {os.cpu_count()} cores; repeat {a.repeat}")
    rounds = str(max(3, a.repeat))
    for row in a.rows.split(","):
        if row == "store":
            b.store_row()
        elif row == "ingest-dl20":
            b.ingest_row()
        elif row.startswith("oneshot-"):
            b.oneshot_row(row.split("-", 1)[1])
        elif row == "dicts-many":
            b.dicts_row()
        elif row.startswith("again-"):
            b.again_row(row.split("-", 1)[1])
        elif row == "evaluator":
            b.in_process("evaluator", EVALUATOR, ["1000", "100", rounds, "20"], "<= 1.0x", 1.0,
                         "Evaluator.evaluate vs pytrec_eval evaluate, 1,000 topics x 100, nDCG@10 + AP")  # fmt: skip
        elif row == "ndpm":
            b.in_process("ndpm", NDPM, [str(DL20_DIR), rounds], "<= 1.0x", 1.0,
                         "store.evaluate NDPM vs ADM, TREC DL 2020, 59 runs")  # fmt: skip
        elif row == "all77":
            b.all77_row()
        elif row == "floor":
            b.floor_row()
        else:
            raise SystemExit(f"unknown row {row!r}; rows: {', '.join(ROWS)}")
        if a.json:
            Path(a.json).write_text(json.dumps({"load_end": loadavg(), "rows": b.rows}, indent=1))
    print(f"\nload average at the end {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

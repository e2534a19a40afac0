"""Label agreement of two qrels sets: `evalstore agree` against the ad-hoc script it replaces.

    python bench/bench_agree.py [--shared ../shared] [--repeat 5] [--synth-topics 2000] [--work-dir DIR]

Two shapes: TREC DL 2019 (9,260 NIST judgments, 43 topics) against a perturbed copy, and a
synthetic qrels set from ../shared/tools/gen_synth.py (--synth-topics topics x 200 judged
documents, seed 0) against its perturbed copy. For each, the same numbers (Cohen's kappa plain,
linear, quadratic and binary at rel 2, Krippendorff's alpha nominal and ordinal, for all topics
and per topic) two ways:

* **evalstore**: ``store.agree(ref, cand, [], rel=2, save=False)`` on a store that holds both sets
  (the premise of the command; ingestion not timed): one SQL pass, statistics on a stack of
  matrices;
* **script**: what people write today: both qrels files read with pandas, merged on (topic, doc),
  then scikit-learn's ``cohen_kappa_score`` (x 4) and ``krippendorff.alpha`` (x 2) on all pairs and
  on every topic's group.

Repetitions are interleaved (evalstore, script, evalstore, ...); each line gives the median and the
range of wall seconds and of CPU seconds (user + sys of the process, DuckDB's threads included),
and the ratio script / evalstore of the medians. The two results are checked to agree to 1e-9.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import evalstore  # noqa: E402

STATS = ("kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_nominal", "alpha_ordinal")


def perturb(src: Path, dst: Path, seed: int = 33) -> None:
    """~20 % of grades moved one step (clipped to 0..3), 5 % of judgments dropped."""
    rng = np.random.default_rng(seed)
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            t, q, d, g = line.split()
            u = rng.random()
            if u < 0.05:
                continue
            grade = int(g)
            if u < 0.25:
                grade = int(np.clip(grade + (1 if rng.random() < 0.5 else -1), 0, 3))
            out.write(f"{t} {q} {d} {grade}\n")


def script(ref: Path, cand: Path, rel: int = 2) -> dict:
    """The ad-hoc way: pandas, scikit-learn and krippendorff, per topic in a loop."""
    import krippendorff
    import pandas as pd
    from sklearn.metrics import cohen_kappa_score

    names = ["topic", "q0", "doc", "grade"]
    a = pd.read_csv(ref, sep=r"\s+", names=names, dtype={"topic": str, "doc": str})
    b = pd.read_csv(cand, sep=r"\s+", names=names, dtype={"topic": str, "doc": str})
    m = a[a.grade >= 0].merge(b[b.grade >= 0], on=["topic", "doc"], suffixes=("_r", "_c"))

    def values(x: np.ndarray, y: np.ndarray) -> dict:
        out = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, w in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
                out[name] = cohen_kappa_score(x, y, weights=w)
            out["kappa_binary"] = cohen_kappa_score(x >= rel, y >= rel)
            for level in ("nominal", "ordinal"):
                try:
                    data = np.vstack([x, y]).astype(float)
                    out[f"alpha_{level}"] = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
                except ValueError:
                    out[f"alpha_{level}"] = float("nan")
        return out

    result = {None: values(m.grade_r.to_numpy(), m.grade_c.to_numpy())}
    for topic, g in m.groupby("topic"):
        result[topic] = values(g.grade_r.to_numpy(), g.grade_c.to_numpy())
    return result


def ours(db: Path) -> dict:
    with evalstore.open(db, read_only=True) as s:
        a = s.agree("ref", "cand", [], rel=2, save=False)
    return {r["topic"]: r for r in [a.labels.overall, *a.labels.topics]}


def timed(fn, *args):
    t0, c0 = time.perf_counter(), os.times()
    out = fn(*args)
    c1 = os.times()
    return time.perf_counter() - t0, (c1.user - c0.user) + (c1.system - c0.system), out


def check(a: dict, b: dict) -> float:
    worst = 0.0
    assert set(a) == set(b), "different topics"
    for topic in a:
        for k in STATS:
            x, y = a[topic][k], b[topic][k]
            x = float("nan") if x is None else float(x)
            y = float("nan") if y is None else float(y)
            if np.isnan(x) or np.isnan(y):
                assert np.isnan(x) and np.isnan(y), (topic, k, x, y)
            else:
                worst = max(worst, abs(x - y))
    assert worst <= 1e-9, worst
    return worst


def bench(label: str, ref: Path, cand: Path, work: Path, repeat: int) -> None:
    db = work / f"{label}.duckdb"
    if db.exists():
        db.unlink()
    with evalstore.open(db) as s:
        s.ingest_qrels(ref, name="ref", progress=False)
        s.ingest_qrels(cand, name="cand", progress=False)
    ours(db), script(ref, cand)  # warm-up: imports, caches
    times: dict[str, list[tuple[float, float]]] = {"evalstore": [], "script": []}
    results = {}
    for _ in range(repeat):
        for name, fn, args in (("evalstore", ours, (db,)), ("script", script, (ref, cand))):
            wall, cpu, out = timed(fn, *args)
            times[name].append((wall, cpu))
            results[name] = out
    worst = check(results["evalstore"], results["script"])
    n = sum(1 for _ in open(ref))
    print(f"\n{label}: {n:,} judgments, {len(results['evalstore']) - 1} topics; max |difference| {worst:.1e}")
    med = {}
    for name, ts in times.items():
        walls, cpus = [w for w, _ in ts], [c for _, c in ts]
        med[name] = statistics.median(walls)
        print(
            f"  {name:10s} wall {statistics.median(walls):8.3f} s [{min(walls):.3f}, {max(walls):.3f}]   "
            f"cpu {statistics.median(cpus):8.3f} s [{min(cpus):.3f}, {max(cpus):.3f}]"
        )
    print(f"  script / evalstore (median wall): {med['script'] / med['evalstore']:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.environ.get("EVALSTORE_SHARED", str(ROOT.parent / "shared")))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--synth-topics", type=int, default=2000)
    ap.add_argument("--work-dir", default=None)
    args = ap.parse_args()
    shared = Path(args.shared)
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="evalstore-bench-agree-"))
    work.mkdir(parents=True, exist_ok=True)
    dl = shared / "data" / "trec-dl-2019-passage" / "qrels.txt"
    if dl.is_file():
        perturb(dl, work / "dl19-perturbed.txt")
        bench("dl19", dl, work / "dl19-perturbed.txt", work, args.repeat)
    else:
        print(f"(no {dl}: TREC DL 2019 left out)")
    synth = work / f"synth-{args.synth_topics}"
    if not (synth / "qrels.txt").is_file():
        subprocess.run(
            [sys.executable, str(shared / "tools" / "gen_synth.py"), "--out", str(synth), "--topics",
             str(args.synth_topics), "--runs", "1", "--depth", "10", "--judged", "200", "--seed", "0", "--quiet"],
            check=True,
        )  # fmt: skip
    perturb(synth / "qrels.txt", synth / "qrels-perturbed.txt")
    bench(f"synth ({args.synth_topics} topics)", synth / "qrels.txt", synth / "qrels-perturbed.txt", work, args.repeat)


if __name__ == "__main__":
    main()

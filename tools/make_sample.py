#!/usr/bin/env python3
"""Regenerate the bundled sample collection in evalstore/data/sample/ (deterministic, seed 2026).

8 topics with graded judgments (0..3), 6 runs of depth 50 with different quality, some
unjudged retrieved documents and a few score ties; and a second qrels set, qrels.judge.txt, made by
a simulated lenient judge (its own seed, 2027, so the files above do not change): it skips about
5 % of the judged documents, moves about a quarter of the grades by one step (up twice as often as
down) and also judges the first 5 unjudged documents of each topic. Run: python tools/make_sample.py
"""

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "evalstore" / "data" / "sample"
TOPICS = [f"S{i:02d}" for i in range(1, 9)]
RUNS = {"bm25": 0.45, "bm25_rm3": 0.55, "dense": 0.7, "rerank": 1.1, "random": 0.0, "hybrid": 0.8}
POOL, JUDGED, DEPTH = 120, 60, 50


def main():
    rng = np.random.default_rng(2026)
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    grades = {}
    with open(OUT / "qrels.txt", "w", newline="\n") as f:
        for t in TOPICS:
            g = rng.choice(4, size=JUDGED, p=[0.6, 0.2, 0.13, 0.07])
            grades[t] = g
            for d in range(JUDGED):
                f.write(f"{t} 0 doc-{t}-{d:03d} {g[d]}\n")
    for name, q in RUNS.items():
        with open(OUT / "runs" / f"{name}.txt", "w", newline="\n") as f:
            for t in TOPICS:
                latent = np.zeros(POOL)
                latent[:JUDGED] = grades[t]
                score = q * latent + rng.standard_normal(POOL)
                top = np.argsort(-score, kind="stable")[:DEPTH]
                s = np.round(score[top], 2)  # 2 decimals: a few ties on purpose
                for rank, (d, sc) in enumerate(zip(top, s), 1):
                    f.write(f"{t} Q0 doc-{t}-{d:03d} {rank} {sc:.2f} {name}\n")
    judge(grades)


def judge(grades):
    """qrels.judge.txt: the simulated second judge (see the module docstring)."""
    rng = np.random.default_rng(2027)
    with open(OUT / "qrels.judge.txt", "w", newline="\n") as f:
        for t in TOPICS:
            g = grades[t].copy()
            moved = rng.random(JUDGED) < 0.25
            step = np.where(rng.random(JUDGED) < 2 / 3, 1, -1)
            g = np.clip(np.where(moved, g + step, g), 0, 3)
            skipped = rng.random(JUDGED) < 0.05
            for d in range(JUDGED):
                if not skipped[d]:
                    f.write(f"{t} 0 doc-{t}-{d:03d} {g[d]}\n")
            for d in range(JUDGED, JUDGED + 5):
                f.write(f"{t} 0 doc-{t}-{d:03d} {int(rng.random() < 0.2)}\n")


if __name__ == "__main__":
    main()

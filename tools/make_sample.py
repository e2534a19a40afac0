#!/usr/bin/env python3
"""Regenerate the bundled sample collection in evalstore/data/sample/ (deterministic, seed 2026).

8 topics with graded judgments (0..3), 6 runs of depth 50 with different quality, some
unjudged retrieved documents and a few score ties. Run: python tools/make_sample.py
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


if __name__ == "__main__":
    main()

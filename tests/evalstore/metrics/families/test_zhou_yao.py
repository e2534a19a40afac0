"""NDPM counted in SQL (sql/zhou_yao.sql: counts over the docs the user prefers, no per-document
lists) against a brute-force count of pairs over D = retrieved docs + judged docs not retrieved,
built from the definition in Python: tied scores, graded gains, judged_only, depth, conventions
(trec_eval's score order, ntcireval's file order with s = -rank, trec_eval9 where the UDF over D
is used), unjudged pool docs (grade -1), topics without relevant docs and complete."""

from __future__ import annotations

import itertools
import math
import random

import pytest

import evalstore


def _collection(seed: int, tmp_path):
    rnd = random.Random(seed)
    qrels, run_lines, runs = [], [], {}
    for t in range(12):
        topic = f"t{t}"
        pool = [f"d{i:02d}" for i in range(rnd.randint(3, 30))]
        judged = rnd.sample(pool, rnd.randint(0, len(pool)))
        for d in judged:
            qrels.append((topic, d, rnd.choice([-1, 0, 0, 1, 1, 2, 3] if t % 4 else [0, -1])))
        retrieved = rnd.sample(pool + [f"x{i}" for i in range(10)], rnd.randint(1, min(25, len(pool) + 10)))
        scores = [rnd.choice([1.0, 1.5, 2.0, 2.5, 3.0]) if seed % 2 else round(rnd.random(), 2) for _ in retrieved]
        runs[topic] = list(zip(retrieved, scores))  # file order
        run_lines += [f"{topic} Q0 {d} {k + 1} {s} sys\n" for k, (d, s) in enumerate(runs[topic])]
    (tmp_path / "qrels.txt").write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in qrels))
    (tmp_path / "run.txt").write_text("".join(run_lines))
    grades: dict[str, dict[str, int]] = {}
    for t, d, g in qrels:
        grades.setdefault(t, {})[d] = g
    return grades, runs


def _gain(grade: int | None, gains: tuple[float, ...] | None) -> float:
    if grade is None or grade <= 0:
        return 0.0
    return float(grade) if gains is None else (gains[grade - 1] if grade <= len(gains) else 0.0)


def _reference(q: dict[str, int], ranked: list[tuple[str, float]], convention, judged_only, depth, gains):
    """NDPM over D by counting every pair (None when the user prefers no pair)."""
    if convention == "ntcireval":
        order = list(ranked)  # file order; s = -rank
    else:  # score descending, ties by docno descending (byte-wise)
        order = sorted(ranked, key=lambda x: x[0].encode(), reverse=True)
        order = sorted(order, key=lambda x: -x[1])
    order = order[: depth or (1000 if convention == "ntcireval" else None)]
    if judged_only:
        order = [x for x in order if q.get(x[0], -1) >= 0]
    s = {d: (-(k + 1) if convention == "ntcireval" else sc) for k, (d, sc) in enumerate(order)}
    for d, g in q.items():
        if g >= 0 and d not in s:
            s[d] = -math.inf
    u = {d: _gain(q.get(d), gains) for d in s}
    c_minus = c_u = strict = 0
    for a, b in itertools.combinations(s, 2):
        if u[a] == u[b]:
            continue
        hi, lo = (a, b) if u[a] > u[b] else (b, a)
        strict += 1
        c_minus += s[hi] < s[lo]
        c_u += s[hi] == s[lo]
    return None if strict == 0 else (2 * c_minus + c_u) / (2 * strict)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"judged_only": True},
        {"depth": 7},
        {"gains": (1.0, 3.0, 7.0)},
        {"convention": "ntcireval"},
        {"convention": "ntcireval", "judged_only": True, "depth": 9},
        {"convention": "ir_measures"},
        {"convention": "trec_eval9"},
        {"complete": True},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default",
)
def test_ndpm_counts_equal_the_pairs_of_d(tmp_path, seed, options):
    grades, runs = _collection(seed, tmp_path)
    convention = options.get("convention", "trec_eval")
    judged_only, depth, gains = options.get("judged_only", False), options.get("depth"), options.get("gains")
    params = ([f"gains={':'.join(map(str, gains))}"] if gains else []) + (["judged_only=true"] if judged_only else [])
    name = f"NDPM({','.join(params)})" if params else "NDPM"
    extra = {k: v for k, v in options.items() if k in ("convention", "depth", "complete")}
    res = evalstore.evaluate(str(tmp_path / "qrels.txt"), [str(tmp_path / "run.txt")], [name], **extra)
    checked = 0
    for topic, ranked in runs.items():
        q = grades.get(topic, {})
        if topic not in grades or (convention == "ntcireval" and not any(g >= 1 for g in q.values())):
            continue  # not evaluated: a topic the qrels lack; ntcireval drops topics without relevant docs
        want = _reference(q, ranked, convention, judged_only, depth, gains)
        got = res.value("sys", topic, name)
        assert got == want, (topic, got, want)  # exactly: integers divided once
        checked += 1
    assert checked >= 6

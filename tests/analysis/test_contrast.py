"""Where two runs differ (evalstore.comparison.contrast, compare --contrast): RBO in SQL for all
topics at once agrees with repro_eval's RBO (evalstore.repro.orderings.rbo, itself checked against
repro_eval) and with Webber's extrapolated RBO as the rbo package computes it; the moves of the
relevant documents; the CLI."""

from __future__ import annotations

import random

import numpy as np
import pytest

import evalstore
from evalstore.comparison import contrast
from evalstore.errors import MetaError
from evalstore.repro.orderings import rbo as repro_eval_rbo


def _rbo_ext(S: list[str], T: list[str], p: float) -> float:
    """Webber et al.'s RBO_ext (eq. 23) at k = min(|S|, |T|): the rbo package's
    RankingSimilarity(S, T).rbo(p=p, ext=True), written out (that package pins numpy < 2)."""
    if not S and not T:
        return 1.0
    if not S or not T:
        return 0.0
    k = min(len(S), len(T))
    total = 0.0
    for d in range(1, k + 1):
        total += p ** (d - 1) * len(set(S[:d]) & set(T[:d])) / d
    return (1 - p) * total + p**k * len(set(S[:k]) & set(T[:k])) / k


@pytest.fixture
def pair():
    rng = random.Random(7)
    qrels, a, b = {}, {}, {}
    for i in range(12):
        t = f"T{i:02d}"
        pool = [f"d{j}" for j in range(60)]
        qrels[t] = {d: rng.choice([0, 1, 2]) for d in rng.sample(pool, 25)}
        la, lb = rng.randint(5, 40), rng.randint(1, 40)  # uneven lengths, some shorter than the depth
        a[t] = {d: 100.0 - k for k, d in enumerate(rng.sample(pool, la))}
        b[t] = {d: 100.0 - k for k, d in enumerate(rng.sample(pool, lb))}
    b["T00"] = dict(a["T00"])  # the same ranking: RBO 1
    s = evalstore.open(":memory:")
    s.ingest_qrels(qrels, name="q")
    s.ingest_run(a, name="a")
    s.ingest_run(b, name="b")
    yield s
    s.close()


@pytest.mark.parametrize("depth, p", [(20, 0.9), (10, 0.8), (100, 0.95)])
def test_rbo_agrees_with_the_references(pair, depth, p):
    found = contrast(pair, "q", "a", "b", depth=depth, p=p)
    assert len(found.rows) == 12
    for r in found.rows:
        A = [
            d
            for (d,) in pair.sql("SELECT doc FROM run_rows WHERE run='a' AND topic=? ORDER BY rank", [r["topic"]]).rows
        ]
        B = [
            d
            for (d,) in pair.sql("SELECT doc FROM run_rows WHERE run='b' AND topic=? ORDER BY rank", [r["topic"]]).rows
        ]
        assert r["rbo"] == pytest.approx(repro_eval_rbo(np.array(A), np.array(B), p, depth), abs=1e-12)
        assert r["rbo_ext"] == pytest.approx(_rbo_ext(A[:depth], B[:depth], p), abs=1e-12)
        assert r["overlap"] == len(set(A[:depth]) & set(B[:depth]))
    assert [r["rbo"] for r in found.rows] == sorted(r["rbo"] for r in found.rows)  # most different first
    same = next(r for r in found.rows if r["topic"] == "T00")
    assert same["rbo_ext"] == pytest.approx(1.0) and same["max_move"] == 0


def test_rbo_ext_agrees_with_the_rbo_package_when_installed(pair):
    rbo = pytest.importorskip("rbo", reason="the rbo package (it pins numpy < 2) is not installed")
    found = contrast(pair, "q", "a", "b", depth=30, p=0.9)
    for r in found.rows:
        A = [
            d
            for (d,) in pair.sql("SELECT doc FROM run_rows WHERE run='a' AND topic=? ORDER BY rank", [r["topic"]]).rows
        ]
        B = [
            d
            for (d,) in pair.sql("SELECT doc FROM run_rows WHERE run='b' AND topic=? ORDER BY rank", [r["topic"]]).rows
        ]
        assert r["rbo_ext"] == pytest.approx(rbo.RankingSimilarity(A[:30], B[:30]).rbo(p=0.9, ext=True), abs=1e-12)


def test_moves_of_relevant_documents(pair):
    pair.evaluate("q", None, ["AP"])
    found = contrast(pair, "q", "a", "b", depth=20, metric="AP")
    judged = dict(((t, d), g) for t, d, g in pair.sql("SELECT topic, doc, grade FROM qrels").rows)
    for r in found.rows:
        ranks = {
            (run, d): k
            for run, d, k in pair.sql(
                "SELECT run, doc, rank FROM run_rows WHERE topic = ? AND rank <= 20", [r["topic"]]
            ).rows
        }
        for m in r["moves"]:
            assert judged[(r["topic"], m["doc"])] == m["grade"] > 0
            assert m["moved"] == ranks.get(("b", m["doc"]), 21) - ranks.get(("a", m["doc"]), 21)
        if r["moves"]:
            assert abs(r["moves"][0]["moved"]) == r["max_move"]
        assert r["difference"] == pytest.approx(r["score_b"] - r["score_a"])


def test_contrast_refuses_one_run_and_bad_p(pair):
    with pytest.raises(MetaError):
        contrast(pair, "q", "a", "a")
    with pytest.raises(MetaError, match="between 0 and 1"):
        contrast(pair, "q", "a", "b", p=1.5)


def test_compare_contrast_cli(cli, sample_db):
    code, out, err = cli(
        "compare", "--contrast", "-b", "bm25", "-r", "rerank", "-m", "AP", "--db", sample_db, "-f", "csv"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("topic,rbo,rbo_ext,overlap,len_baseline,len_run,max_move,moved_relevant,AP bm25")
    assert len(lines) == 9 and "p = 0.9" in err
    code, out, err = cli("compare", "--contrast", "-b", "bm25", "-m", "AP", "--db", sample_db)
    assert code != 0 and "one -r RUN" in err

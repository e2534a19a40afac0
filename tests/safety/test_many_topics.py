"""Many topics under a small memory limit: a plan that grows with the square of the number of topics
fails at once instead of slowly (issue 29).

20,000 topics x 10 documents evaluated with DuckDB limited to MEMORY and no spill directory
(``temp_directory=''``), through the one-shot command, :func:`evalstore.evaluate` on dicts and on
files, and the store (ingest, eval, eval again, subsamples). The linear plans need a few tens of MB
here; the quadratic one that rl_topics had (its two scans of rl_qtopics paired on qrels_id alone:
topics x topics rows, 400 M at 20,000 topics, about 18 GB) runs out of memory within a second,
whatever the machine's speed. Not a timing test: it counts what must fit, and checks the values.
"""

from __future__ import annotations

import math
import random

import pytest
from support import run_cli

import evalstore

TOPICS = 20_000
DOCS = 10
MEMORY = "160MB"
METRICS = ["AP", "nDCG@10", "RR", "P@10", "R@100", "Bpref", "num_ret"]


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """qrels: two judged docs per topic (one relevant); run: 10 docs per topic, the relevant one at
    rank (topic mod 10) + 1, so that every mean has a closed form."""
    d = tmp_path_factory.mktemp("many")
    rnd = random.Random(29)
    qrels, run = [], []
    for t in range(TOPICS):
        rel = t % DOCS
        qrels.append(f"t{t} 0 d{t}_{rel} 1\nt{t} 0 d{t}_x 0\n")
        for k in range(DOCS):
            run.append(f"t{t} Q0 d{t}_{k} {k + 1} {DOCS - k + rnd.random() / 10:.4f} many\n")
    (d / "qrels.txt").write_text("".join(qrels))
    (d / "run.txt").write_text("".join(run))
    return d


def _expected_means() -> dict[str, float]:
    # the relevant doc at rank r = (t mod 10) + 1, uniformly over r = 1..10
    ranks = range(1, DOCS + 1)
    return {
        "AP": sum(1 / r for r in ranks) / DOCS,
        "RR": sum(1 / r for r in ranks) / DOCS,
        "nDCG@10": sum(1 / math.log2(r + 1) for r in ranks) / DOCS,
        "P@10": 0.1,
        "R@100": 1.0,
        # the judged nonrelevant doc (d{t}_x) is never retrieved: no judged nonrelevant above
        "Bpref": 1.0,
        "num_ret": float(DOCS * TOPICS),  # summed over topics, as trec_eval does
    }


def _check(result) -> None:
    means = {m: (v, n) for _, m, v, n in result.means}
    for m, want in _expected_means().items():
        got, n = means[m]
        assert n == TOPICS and got == pytest.approx(want, rel=1e-12), m


def test_one_shot_command_under_a_small_memory_limit(collection):
    r = run_cli(
        "eval", collection / "qrels.txt", collection / "run.txt", *[a for m in METRICS for a in ("-m", m)],
        "--memory-limit", MEMORY, "--temp-dir", "", "--format", "csv",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    header, row = r.stdout.strip().splitlines()[:2]
    means = dict(zip(header.split(","), row.split(",")))
    assert int(means["n_topics"]) == TOPICS
    for m, want in _expected_means().items():
        assert float(means[m]) == pytest.approx(want, abs=5e-5), m


def test_evaluate_files_and_dicts_under_a_small_memory_limit(collection):
    limits = {"memory_limit": MEMORY, "temp_directory": ""}
    _check(evalstore.evaluate(str(collection / "qrels.txt"), [str(collection / "run.txt")], METRICS, **limits))
    qrels: dict[str, dict[str, int]] = {}
    for line in (collection / "qrels.txt").read_text().splitlines():
        t, _, d, g = line.split()
        qrels.setdefault(t, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in (collection / "run.txt").read_text().splitlines():
        t, _, d, _, s, _ = line.split()
        run.setdefault(t, {})[d] = float(s)
    _check(evalstore.evaluate(qrels, run, METRICS, **limits))
    # the per-call path, with the qrels' side prepared once or inline, the run narrowed to the judged
    # docs with each topic's count (the shape of the one-shot query that grew as topics x topics)
    for prepare in (True, False):
        with evalstore.Evaluator(qrels, METRICS, prepare=prepare, **limits) as ev:
            per_topic = ev.evaluate(run)
        assert len(per_topic) == TOPICS and per_topic["t3"]["AP"] == pytest.approx(1 / 4)


def test_the_store_under_a_small_memory_limit(collection, tmp_path):
    with evalstore.open(tmp_path / "s.duckdb", memory_limit=MEMORY, temp_directory="") as s:
        s.ingest_qrels(str(collection / "qrels.txt"), progress=False)
        s.ingest_run(str(collection / "run.txt"), progress=False)
        _check(s.evaluate("qrels", None, METRICS, progress=False))
        _check(s.evaluate("qrels", None, METRICS, progress=False))  # reused
        assert s.explain("AP", "qrels", "many", "t7").value == pytest.approx(1 / 8)
    r = run_cli(
        "--db", tmp_path / "s.duckdb", "--memory-limit", MEMORY, "subsample", "--qrels", "qrels",
        "--fractions", "0.5", "--subsample-trials", "2", "--subsample-seed", "1", "--min-nonrel", "0",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    r = run_cli(
        "eval", "--db", tmp_path / "s.duckdb", "--memory-limit", MEMORY, "--temp-dir", "", "--subsamples", "all",
        "-m", "AP", "-m", "nDCG@10", "--format", "csv",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert len(r.stdout.strip().splitlines()) == 1 + 3  # the parent and two trials

"""judged_rows (evalstore/ingest/dict_runs.py) gives the judged rows of a run given as dicts with the
ranks the general path gives them (the run as an Arrow table, ranked whole), or None where that path
must decide (keys that are not strings, docnos a file could not hold, scores Arrow refuses, many
ties or judged rows)."""

from __future__ import annotations

import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from evalstore.ingest import dict_runs
from evalstore.ingest.dict_runs import judged_rows, one_field_each
from evalstore.ingest.fast import ranked_rows
from evalstore.ingest.sources import run_table


@pytest.fixture(autouse=True)
def _any_size(monkeypatch):
    """The small runs here take this path (by default, runs of MIN_ROWS rows and more do)."""
    monkeypatch.setattr(dict_runs, "MIN_ROWS", 0)


def test_small_runs_go_to_the_general_path(monkeypatch):
    run = {"t": {"a": 1.0, "b": 2.0}}
    assert judged_rows(run, {"t": ["a"]}) is not None
    monkeypatch.setattr(dict_runs, "MIN_ROWS", 3)
    assert judged_rows(run, {"t": ["a"]}) is None


def _run(rnd: random.Random, topics: int, lengths: tuple[int, int] = (0, 60)) -> dict[str, dict[str, float]]:
    out = {}
    for t in range(topics):
        docs = rnd.sample(range(90), rnd.randint(*lengths))
        # few distinct scores: many ties, ordered by docno (descending, byte-wise: d9 > d10, é > z)
        out[f"t{t}"] = {("é" if d % 13 == 0 else "d") + str(d): rnd.choice([0.5, 1.0, -2.0, 0.0, rnd.random()])
                        for d in docs}  # fmt: skip
    return out


def _judged(rnd: random.Random, topics: int) -> dict[str, dict[str, int]]:
    return {
        f"t{t}": {("é" if d % 13 == 0 else "d") + str(d): rnd.choice([-1, 0, 1, 2]) for d in rnd.sample(range(90), 30)}
        for t in range(0, topics + 5, 2)  # every other topic of the run, and topics it lacks
    }


def _general(run: dict, judged: dict) -> tuple[list[tuple[str, str, float, int]], pa.Table]:
    """The judged rows ``(topic, doc, score, rank)`` and the counts of the general path: the run as a
    table, ranked whole (fast.ranked_rows), narrowed to the pairs ``judged`` lists."""
    table, counts = ranked_rows(run_table(run), pa.array(sorted({d for ds in judged.values() for d in ds})))
    assert counts is not None
    rows = [
        (r["topic"], r["doc"], r["score"], r["rank"])
        for r in table.to_pylist()
        if r["doc"] in judged.get(r["topic"], ())
    ]
    return sorted(rows), counts


def _rows(got: tuple[pa.Table, pa.Table]) -> list[tuple[str, str, float, int]]:
    return sorted(zip(*(got[0].column(c).to_pylist() for c in ("topic", "doc", "score", "rank"))))


@pytest.mark.parametrize("pairs", [0, 4, 10**9])  # by sorting the parts, by comparing windows, as they come
@pytest.mark.parametrize("part", [3, 50, 1 << 16])
@pytest.mark.parametrize("seed", range(4))
def test_judged_rows_rank_as_the_whole_run_ranked(monkeypatch, seed, part, pairs):
    """Ties broken by the docno (descending, byte-wise), negative scores and -0.0, topics of unequal
    lengths (a short topic's window reaches into the next), empty topics, topics the qrels lack, few
    and many judged rows; in parts of whole topics."""
    monkeypatch.setattr(dict_runs, "ROWS_PER_PART", part)
    monkeypatch.setattr(dict_runs, "PAIRS_PER_ROW", pairs)
    rnd = random.Random(seed)
    run, judged = _run(rnd, 40), _judged(rnd, 40)
    run["t3"] = {}  # a topic with no rows: not counted, as a table of the run's rows has none
    run["t5"] = {"d1": -0.0, "d2": 0.0, "d3": 0.0, "d4": -1e-300}
    judged["t7"] = list(run["t7"])[:2]  # few judged rows
    got = judged_rows(run, judged)
    assert got is not None
    want, counts = _general(run, judged)
    assert _rows(got) == want and len(want) > 100
    assert got[1].sort_by("topic").equals(counts.sort_by("topic"))
    assert "t3" not in got[1].column("topic").to_pylist()


def test_judged_rows_take_the_qrels_docnos_as_lists_too():
    rnd = random.Random(9)
    run, judged = _run(rnd, 20), _judged(rnd, 20)
    as_lists = {t: list(ds) for t, ds in judged.items()}
    a, b = judged_rows(run, judged), judged_rows(run, as_lists)
    assert a is not None and b is not None and a[0].equals(b[0]) and a[1].equals(b[1])


def test_scores_as_arrow_converts_them():
    """Python ints, bools, numpy scalars: the scores and ranks of the general path."""
    run = {
        "a": {"x": 1, "y": np.float32(0.1), "z": np.int64(3), "w": True, "v": np.float64(0.1)},
        "b": {"x": 2**53, "y": 0.5},
    }
    judged = {"a": ["x", "y", "z", "w", "v"], "b": ["x", "y"]}
    got = judged_rows(run, judged)
    assert got is not None
    assert _rows(got) == _general(run, judged)[0]


@pytest.mark.parametrize(
    "run",
    [
        {1: {"d": 1.0}},  # a topic that is not a str (the general path converts it)
        {"t": {1: 1.0}},  # a docno that is not a str
        {"t": {"d 1": 1.0}},  # a docno a file could not hold
        {"t": {"d\x7f": 1.0}},
        {"t": {"é\n": 1.0}},
        {"t": {"": 1.0}},
        {"": {"d": 1.0}},
        {"t\t": {"d": 1.0}},
        {"t": {"d": float("nan")}},
        {"t": {"d": "1.5"}},
        {"t": {"d": None}},
        {"t": {"d": Decimal("0.5")}},  # (Arrow refuses it; the general path converts it with float())
        {"t": {"d": 2**80}},
        {"t": {}},
        {},
        {"t": [("d", 1.0)]},
        [("t", "d", 1.0)],
    ],
)
def test_anything_else_goes_to_the_general_path(run):
    assert judged_rows(run, {"t": ["d"]}) is None


def test_many_ties_go_to_the_general_path(monkeypatch):
    run = {"t": {f"d{i}": 1.0 for i in range(10)}}
    judged = {"t": [f"d{i}" for i in range(10)]}
    got = judged_rows(run, judged)
    assert got is not None and got[0].column("rank").to_pylist() == list(range(10, 0, -1))
    monkeypatch.setattr(dict_runs, "TIED_PAIRS", 5)
    monkeypatch.setattr(dict_runs, "ROWS_PER_TIED_PAIR", 10**9)
    assert judged_rows(run, judged) is None  # 10 x 10 tied pairs


def test_one_field_each():
    assert one_field_each(["d1", "é", "文書", "x\x85"])  # (U+0085 is no field separator of a file)
    assert one_field_each([])
    for bad in (["a b"], ["a", "b\tc"], ["\x00"], ["é\x7f"], ["a\ud800"], [1]):
        assert not one_field_each(bad)

"""The one evaluation entry point: a source and a request (evalstore/evaluation/request.py, checked
before any work; evalstore.api.evaluate_source)."""

from __future__ import annotations

import inspect

import pytest
from support import SAMPLE

import evalstore
from evalstore.api import evaluate_source
from evalstore.evaluation.request import EvalRequest, Given, OnSpark, OptionConflict, Stored, check
from evalstore.intervals.request import IntervalRequest
from evalstore.metrics.options import EvalOptions


def test_every_public_edge_goes_through_the_entry_point(sample_store, monkeypatch):
    import evalstore.api as api
    import evalstore.store as store_module

    calls = []
    real = api.evaluate_source

    def spy(source, request):
        calls.append((type(source).__name__, request))
        return real(source, request)

    monkeypatch.setattr(api, "evaluate_source", spy)
    monkeypatch.setattr(store_module, "evaluate_source", spy)
    a = sample_store.evaluate("sample", ["bm25"], ["AP"], convention="ntcireval", ci="t", save=False)
    b = evalstore.evaluate(SAMPLE / "qrels.txt", [SAMPLE / "runs" / "bm25.txt"], ["AP"], convention="ntcireval")
    sample_store.leaderboard(["sample"], ["bm25", "dense"], ["AP"], save=False)
    assert [c[0] for c in calls] == ["Stored", "Given", "Stored"]
    assert calls[0][1] == EvalRequest(("AP",), EvalOptions("ntcireval"), IntervalRequest("t"))
    assert a.means[0][2] == pytest.approx(b.means[0][2])


def test_the_same_request_on_two_sources_gives_the_same_numbers(sample_store):
    request = EvalRequest(["AP", "nDCG@10"], EvalOptions(depth=5))
    stored = evaluate_source(Stored(sample_store, "sample", ["bm25"], save=False), request).result
    given = evaluate_source(Given(SAMPLE / "qrels.txt", [SAMPLE / "runs" / "bm25.txt"]), request).result
    assert stored.means == given.means and stored.metrics == given.metrics == ["AP", "nDCG@10"]


@pytest.mark.parametrize(
    "source, request_, option",
    [
        (Stored(None, ["a", "b"]), EvalRequest(), "qrels"),
        (Stored(None, ["a", "b"], agg="median"), EvalRequest(), "agg"),
        (Stored(None, ["a", "b"], agg="mean", subsamples="all"), EvalRequest(), "subsamples"),
        (Stored(None, ["a", "b"], agg="mean"), EvalRequest(intervals=IntervalRequest("t")), "ci"),
        (Stored(None, ["a", "b"], agg="borda"), EvalRequest(intervals=IntervalRequest(rank_ci="t")), "rank_ci"),
        (OnSpark("dir", "q"), EvalRequest(intervals=IntervalRequest(rank_ci="t")), "ci"),
        (OnSpark("dir", "q"), EvalRequest(options=EvalOptions("ntcireval")), "convention"),
    ],
)
def test_options_that_do_not_go_together_are_named(source, request_, option):
    with pytest.raises(OptionConflict) as e:
        check(source, request_)
    assert e.value.option == option
    assert f"{option}=" in str(e.value) or option == "qrels"  # Python's spelling
    assert f"--{option.replace('_', '-')}" in e.value.said(lambda k: "--" + k.replace("_", "-")) or option == "qrels"


def test_the_command_line_says_a_conflict_in_its_own_spelling(sample_db, cli):
    code, _, err = cli("eval", "--db", sample_db, "-q", "sample", "-m", "AP", "--agg", "mean", "--ci", "t")
    assert code == 2 and "--agg" in err and "--ci" in err and "ci=" not in err


def test_store_methods_take_the_options_as_keywords_or_as_one_value(sample_store):
    sig = inspect.signature(sample_store.compare)
    assert [p for p in ("convention", "complete", "depth", "pool", "options") if p in sig.parameters] == [
        "convention",
        "complete",
        "depth",
        "pool",
        "options",
    ]
    by_keywords = sample_store.compare("sample", "bm25", ["dense"], ["AP"], depth=5, save=False)
    by_value = sample_store.compare("sample", "bm25", ["dense"], ["AP"], options=EvalOptions(depth=5), save=False)
    assert (by_keywords.means == by_value.means).all()
    with pytest.raises(evalstore.errors.MetricError, match="not both"):
        sample_store.compare("sample", "bm25", ["dense"], ["AP"], depth=5, options=EvalOptions(), save=False)

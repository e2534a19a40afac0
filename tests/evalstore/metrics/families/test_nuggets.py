"""The nugget metrics (sql/nuggets.sql) against nuggetizer's calculate_nugget_scores, the tool that
defines them: on random nugget sets and assignments (topics without vital nuggets, all-okay and
all-unsupported answers and topics without nuggets included), every per-topic score is equal to
the last bit, under evalstore's names and nuggetizer's. A run's mean is evalstore's one rule (the
correctly rounded sum over the topics divided by their number, evalstore.aggregate) of those
values, exactly; nuggetizer's calculate_global_metrics takes statistics.mean (the correctly
rounded mean), which can differ from it in the last bit: within one ulp, checked too. The weighted
form and the length cutoff on hand-worked answers."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from nuggetizer_reference import VERSION, nuggetizer_metrics, restated

import evalstore

METRICS = {"strict_vital": "strict_vital_score", "strict_all": "strict_all_score", "vital": "vital_score",
           "all": "all_score"}  # fmt: skip
LABELS = ("support", "partial_support", "not_support")


def _random_collection(seed: int, n_topics: int = 40, n_runs: int = 6) -> tuple[list[dict], list[dict]]:
    """Nugget lines and assignment lines: each topic 0..9 nuggets, vital with a probability of its
    own (0 or 1 for some topics: all okay, all vital); each run's answers assigned with a tendency
    of their own (one run assigns not_support only)."""
    rng = np.random.default_rng(seed)
    nuggets, assigned = [], []
    for t in range(n_topics):
        n = int(rng.integers(0, 10)) if t > 1 else (0 if t == 0 else 5)
        p_vital = [0.0, 1.0, 0.5, float(rng.random())][t % 4]
        texts = [{"text": f"topic {t} fact {i}", "importance": "vital" if rng.random() < p_vital else "okay"}
                 for i in range(n)]  # fmt: skip
        nuggets.append({"qid": f"T{t:02d}", "query": f"question {t}", "nuggets": texts})
        for r in range(n_runs):
            p = np.array([0.0, 0.0, 1.0]) if r == 0 else rng.dirichlet(np.ones(3))
            labels = rng.choice(LABELS, size=n, p=p)
            assigned.append({"qid": f"T{t:02d}", "run_id": f"run{r}",
                             "nuggets": [dict(x, assignment=str(a)) for x, a in zip(texts, labels)]})  # fmt: skip
    return nuggets, assigned


def _store(tmp_path, nuggets: list[dict], assigned: list[dict]):
    """A store with the runs' answers, the nugget set and the assignment set 'as'."""

    def jsonl(name, rows):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path

    answers = [{"run_id": a["run_id"], "topic_id": a["qid"], "references": [],
                "answer": [{"text": "an answer", "citations": []}]} for a in assigned]  # fmt: skip
    store = evalstore.open(tmp_path / "n.duckdb")
    store.ingest_answers(jsonl("answers.jsonl", answers))
    store.ingest_nuggets(jsonl("nuggets.jsonl", nuggets), name="nuggets")
    store.ingest_assignments(jsonl("assigned.jsonl", assigned), nuggets="nuggets", name="as")
    return store


@pytest.fixture(scope="module")
def random_case(tmp_path_factory):
    nuggets, assigned = _random_collection(2040)
    store = _store(tmp_path_factory.mktemp("nuggets"), nuggets, assigned)
    result = store.evaluate("as", None, list(METRICS) + list(METRICS.values()), save=False)
    store.close()
    return assigned, result


def _check(assigned, result, score) -> int:
    """Every per-topic value and every run's mean against ``score(qid, nuggets)``; the number of
    values compared."""
    values = {(r, t, m): v for r, t, m, v in result.per_topic}
    means = {(r, m): v for r, m, v, _ in result.means}
    n = 0
    for a in assigned:
        ref = score(a["qid"], a["nuggets"])
        for ours, theirs in METRICS.items():
            for name in (ours, theirs):
                assert values[(a["run_id"], a["qid"], name)] == ref[theirs], (a["run_id"], a["qid"], name)
                n += 1
    for run in sorted({a["run_id"] for a in assigned}):
        records = [score(a["qid"], a["nuggets"]) for a in assigned if a["run_id"] == run]
        for ours, theirs in METRICS.items():
            values_ = [r[theirs] for r in records]
            assert means[(run, ours)] == math.fsum(values_) / len(values_), (run, ours)
            # calculate_global_metrics: statistics.mean of the records, the same to the last bit but one
            assert abs(means[(run, ours)] - statistics.mean(values_)) <= math.ulp(statistics.mean(values_))
            n += 1
    return n


def test_every_score_and_mean_is_the_restated_definition(random_case):
    assigned, result = random_case
    assert _check(assigned, result, restated) == 40 * 6 * 8 + 6 * 4


def test_every_score_and_mean_is_nuggetizers(random_case, tmp_path_factory):
    module = nuggetizer_metrics(tmp_path_factory.mktemp("nuggetizer"))
    if isinstance(module, str):
        pytest.skip(module)
    assigned, result = random_case

    def theirs(qid, nuggets):
        m = module.calculate_nugget_scores(qid, nuggets)
        return {k: getattr(m, k) for k in METRICS.values()}

    assert _check(assigned, result, theirs) == 40 * 6 * 8 + 6 * 4
    for run in sorted({a["run_id"] for a in assigned}):  # the global means, as nuggetizer prints them
        records = [{"qid": a["qid"], "nuggets": a["nuggets"]} for a in assigned if a["run_id"] == run]
        assert module.calculate_global_metrics(records) == {
            "qid": "all",
            **{k: statistics.mean(restated(r["qid"], r["nuggets"])[k] for r in records) for k in METRICS.values()},
        }
        means = {m: v for r, m, v, _ in result.means if r == run}
        for ours, field in METRICS.items():
            g = module.calculate_global_metrics(records)[field]
            assert abs(means[ours] - g) <= math.ulp(g), (run, ours)
    for a in assigned:  # the restatement is nuggetizer's definition
        assert restated(a["qid"], a["nuggets"]) == {"qid": a["qid"], **theirs(a["qid"], a["nuggets"])}


def test_the_edge_cases_are_in_the_random_collection(random_case):
    assigned, _ = random_case
    vital = [sum(n["importance"] == "vital" for n in a["nuggets"]) for a in assigned]
    assert any(not a["nuggets"] for a in assigned)  # a topic without nuggets: every score 0
    assert any(v == 0 and a["nuggets"] for v, a in zip(vital, assigned))  # all okay: the vital forms 0
    assert any(a["nuggets"] and all(n["assignment"] == "not_support" for n in a["nuggets"]) for a in assigned)
    assert any(a["nuggets"] and all(n["importance"] == "vital" for n in a["nuggets"]) for a in assigned)


def test_weighted_and_the_length_cutoff_on_a_worked_answer(tmp_path):
    nuggets = [{"qid": "q", "query": "?", "nuggets": [
        {"text": "a", "importance": "vital"}, {"text": "b", "importance": "vital"},
        {"text": "c", "importance": "okay"}, {"text": "d", "importance": "okay"}]}]  # fmt: skip
    labels = {"a": "support", "b": "partial_support", "c": "support", "d": "not_support"}
    assigned = [{"qid": "q", "run_id": "run0", "nuggets": [dict(n, assignment=labels[n["text"]])
                                                         for n in nuggets[0]["nuggets"]]}]  # fmt: skip
    store = _store(tmp_path, nuggets, assigned)  # the answer: "an answer", 2 words
    res = store.evaluate(
        "as", None, ["weighted", "weighted(okay=1,partial=0)", "weighted(okay=0)", "vital@2", "vital@1", "all@1"]
    )
    v = {m: x for _, _, m, x in res.per_topic}
    # vital 1: a 1, b 0.5; okay 0.5: c 1, d 0  ->  (1 + 0.5 + 0.5) / (1 + 1 + 0.5 + 0.5)
    assert v["weighted"] == pytest.approx(2 / 3, abs=1e-15)
    assert v["weighted(okay=1,partial=0)"] == 0.5  # strict_all
    assert v["weighted(okay=0)"] == 0.75  # vital
    assert v["vital@2"] == 0.75 and v["vital@1"] == 0.0 and v["all@1"] == 0.0  # 2 words: over a 1-word budget
    store.close()


def test_version_compared_with():
    assert VERSION == "0.0.5"

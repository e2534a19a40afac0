"""The Spark backend: the same SQL files through Spark SQL (local[2]) give the DuckDB engine's
per-topic scores to 1e-12, and the scores come back into a store. Skipped without pyspark or Java."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import evalstore
from evalstore.layout import export_store, import_scores
from evalstore.metrics import registry

pyspark = pytest.importorskip("pyspark", reason="needs the spark extra: pip install '.[spark]'")
pytest.importorskip("sqlglot", reason="needs the spark extra: pip install '.[spark]'")
if shutil.which("java") is None:
    pytest.skip("needs Java for Spark (Debian: openjdk-17-jre-headless)", allow_module_level=True)

from evalstore import spark as backend  # noqa: E402

SAMPLE = Path(__file__).parent.parent / "evalstore" / "data" / "sample"
TREC_EVAL_DIR = Path(__file__).parent.parent.parent / "shared" / "conformance" / "trec_eval"
METRICS = ["AP", "nDCG@10", "P@10", "RR", "Bpref", "Q-measure", "nDCG", "R@100", "Rprec", "infAP", "P(rel=2)@5",
           "nDCG(gains=1:3:7)@5", "ERR@10", "MSnDCG@10", "AP-ntcir@10", "num_rel_ret", "recall_5"]  # fmt: skip


@pytest.fixture(scope="module")
def spark():
    s = backend.session()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spark")
    with evalstore.open(folder / "a.duckdb") as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
        export_store(s, folder / "layout")
    return folder


def test_spark_equals_duckdb_per_topic(spark, layout):
    scores = backend.evaluate(spark, layout / "layout", qrels="q", metrics=METRICS)
    got = {(r["run"], r["metric"], r["topic"]): r["value"] for r in scores.collect()}
    with evalstore.open(layout / "a.duckdb") as s:
        ref = s.evaluate("q", None, METRICS, save=False)
        names = ref.canonical
        n = 0
        for run, topic, metric, value in ref.per_topic:
            assert got[(run, names[metric], topic)] == pytest.approx(value, abs=1e-12), (run, metric, topic)
            n += 1
        assert n == len(got) and n > 100
        # the scores come back into the store and read as the DuckDB engine's
        assert import_scores(s, layout / "layout") == len({(r, m) for r, m, _ in got})
        stored = dict(
            ((run, metric, topic), v)
            for run, metric, topic, v in s.sql("SELECT run, metric, topic, value FROM scores WHERE qrels = 'q'").rows
        )
        assert all(stored[k] == pytest.approx(v, abs=1e-12) for k, v in got.items())


def test_python_udf_metrics_are_refused_with_their_names(spark, layout):
    with pytest.raises(evalstore.MetricError, match="not available on Spark: P-plus"):
        backend.evaluate(spark, layout / "layout", qrels="q", metrics=["AP", "P-plus"], write=False)
    assert backend.supported(registry.get("AP")) is None and backend.supported(registry.get("NDPM"))

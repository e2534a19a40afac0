"""The Spark backend: the same SQL files through Spark SQL (local[2]) give the DuckDB engine's
per-topic scores to 1e-12, and the scores come back into a store. Skipped without pyspark or Java."""

from __future__ import annotations

import csv
import importlib.util
import io
import shutil
from pathlib import Path

import pytest
from support import FIXTURES, SAMPLE, run_cli

import evalstore
from evalstore.layout import export_store, import_scores
from evalstore.metrics import registry
from evalstore.metrics.options import EvalOptions

# found, not imported: pyspark is imported when the session starts, not when the tests are collected
if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("sqlglot") is None:
    pytest.skip("needs the spark extra: pip install '.[spark]'", allow_module_level=True)
if shutil.which("java") is None:
    pytest.skip("needs Java for Spark (Debian: openjdk-17-jre-headless)", allow_module_level=True)

from evalstore import spark as backend  # noqa: E402

TREC_EVAL_FIXTURES = FIXTURES / "trec_eval"  # copies of trec_eval's test files
METRICS = ["AP", "nDCG@10", "P@10", "RR", "Bpref", "Q-measure", "nDCG", "R@100", "Rprec", "infAP", "P(rel=2)@5",
           "nDCG(gains=1:3:7)@5", "ERR-ntcir@10", "ERR@10", "MSnDCG@10", "AP-ntcir@10", "num_rel_ret",
           "recall_5"]  # fmt: skip


#: the test session's JVM lives a minute and reads kilobytes: the client compiler only and the
#: serial collector (half the JVM's CPU of HotSpot's defaults here); generating and compiling code
#: (whole stages, then expressions: interpreted instead) and adaptive re-planning cost more than these
#: queries compute (none of them changes a value)
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
SMALL_DATA = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}


@pytest.fixture(scope="module")
def spark():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYSPARK_SUBMIT_ARGS", f'--driver-java-options "{JVM_OPTIONS}" pyspark-shell')
        s = backend.session()  # the command line's session (`eval --engine spark` gets this one)
    for key, value in SMALL_DATA.items():
        s.conf.set(key, value)
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
    """Every metric that runs on Spark (the registry's, with their defaults) on the graded sample
    collection (grades 0-3): per-topic values equal to DuckDB's within 1e-12, and the scores come
    back into the store and read as the DuckDB engine's."""
    metrics = list(dict.fromkeys([*METRICS, *_all_supported()]))  # parameters and cutoffs, then the registry's
    assert len(metrics) > 40
    scores = backend.evaluate(spark, layout / "layout", qrels="q", metrics=metrics)
    got = {(r["run"], r["metric"], r["topic"]): r["value"] for r in scores.collect()}
    with evalstore.open(layout / "a.duckdb") as s:
        ref = s.evaluate("q", None, metrics, save=False)
        names = ref.stored_names
        keys = set()
        for run, topic, metric, value in ref.per_topic:
            other = got[(run, names[metric], topic)]
            assert (other is None and value is None) or other == pytest.approx(value, abs=1e-12), (run, metric, topic)
            keys.add((run, names[metric], topic))
        assert keys == set(got) and len(keys) > 40 * 6 * 8  # (two spellings of one metric are stored once)
        # the scores come back into the store and read as the DuckDB engine's
        assert import_scores(s, layout / "layout") == len({(r, m) for r, m, _ in got})
        stored = dict(
            ((run, metric, topic), v)
            for run, metric, topic, v in s.sql("SELECT run, metric, topic, value FROM scores WHERE qrels = 'q'").rows
        )
        assert all(stored[k] == pytest.approx(v, abs=1e-12) for k, v in got.items() if v is not None)


def test_eval_engine_spark_prints_what_the_store_prints(spark, layout):
    """`eval --engine spark` goes through the same result and writer as the store: the same rows in
    the same order (runs, topics, metrics), the means among them, values to 1e-12."""
    asked = ["-m", "nDCG@10", "-m", "AP", "-m", "P@5", "-r", "rerank", "-r", "bm25", "-p", "-f", "csv"]
    by_spark = run_cli("eval", "--engine", "spark", "--data", layout / "layout", "--qrels", "q", *asked)
    by_store = run_cli("eval", "--db", layout / "a.duckdb", "--qrels", "q", *asked)
    assert by_spark.exit_code == 0, by_spark.output
    assert by_store.exit_code == 0, by_store.output
    spark_rows = list(csv.reader(io.StringIO(by_spark.stdout)))
    store_rows = list(csv.reader(io.StringIO(by_store.stdout)))
    assert len(spark_rows) == len(store_rows) > 10
    assert spark_rows[0] == store_rows[0]
    for got, want in zip(spark_rows[1:], store_rows[1:], strict=True):
        assert got[:-1] == want[:-1]  # run, topic ('all' for the means), metric in the same order
        assert float(got[-1]) == pytest.approx(float(want[-1]), abs=1e-12), want


def test_python_udf_metrics_are_refused_with_their_names(spark, layout):
    with pytest.raises(evalstore.MetricError, match="not available on Spark: P-plus"):
        backend.evaluate(spark, layout / "layout", qrels="q", metrics=["AP", "P-plus"], write=False)
    assert backend.supported(registry.get("AP")) is None and backend.supported(registry.get("NDPM"))


def test_measures_of_ones_own_in_sql_run_on_spark(spark, layout):
    """A measure of one's own in SQL (over ranked and judgments, with a cutoff, and one over the
    ranked list's own relations) gives Spark what DuckDB's sandbox gives, to 1e-12; a Python one is
    refused with its name."""
    evalstore.register_measure(
        "ownDCG",
        sql="""-- reads: ranked, judgments
        SELECT r.qrels, r.run, r.topic, exact_sum(r.grade / log2(r.rank + 1)) / any_value(j.n) AS value
        FROM ranked r JOIN (SELECT qrels, topic, count(*) AS n FROM judgments GROUP BY ALL) j USING (qrels, topic)
        WHERE r.grade > 0 AND r.rank <= ${k} GROUP BY r.qrels, r.run, r.topic""",
    )
    own_r = "SELECT qrels_id, run_id, topic, max(cnt) AS value FROM rl_judged GROUP BY ALL"
    evalstore.register_measure("ownR", sql="-- reads: rl_judged\n-- needs: cnt\n" + own_r)
    evalstore.register_measure("ownPy", python=lambda ranked: ranked.group_by(["qrels", "run", "topic"]).aggregate([]))
    try:
        metrics = ["ownDCG@5", "ownDCG", "ownR"]
        scores = backend.evaluate(spark, layout / "layout", qrels="q", metrics=metrics, write=False)
        got = {(r["run"], r["metric"], r["topic"]): r["value"] for r in scores.collect()}
        with evalstore.open(layout / "a.duckdb") as s:
            ref = s.evaluate("q", None, metrics, save=False)
        assert len(got) == len(ref.per_topic) > 100
        for run, topic, metric, value in ref.per_topic:
            assert got[(run, metric, topic)] == pytest.approx(value, abs=1e-12), (run, metric, topic)
        with pytest.raises(evalstore.MetricError, match="not available on Spark: ownPy"):
            backend.evaluate(spark, layout / "layout", qrels="q", metrics=["ownPy"], write=False)
    finally:
        for name in ("ownDCG", "ownR", "ownPy"):
            evalstore.unregister_measure(name)


def _all_supported() -> list[str]:
    """Every metric that runs on Spark, under a name that evaluates it with its defaults."""
    out = []
    for spec in registry.all_metrics():
        if backend.supported(spec):
            continue
        for name in (spec.name, spec.name + "@10", spec.name + "@0.5", spec.name + "(mult=0.5)"):
            try:
                registry.parse_metric(name)
                out.append(name)
                break
            except evalstore.MetricError:
                continue
    return out


def _compare(spark, tmp_path, qrels: Path, runs: list[Path], metrics: list[str], **options) -> int:
    """Evaluate on DuckDB and on Spark; every per-topic value equal within 1e-12; the number compared."""
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_qrels(qrels, name="q", progress=False)
        s.ingest_run(runs, name_from="file", progress=False)
        ref = s.evaluate("q", None, metrics, save=False, **options)
        export_store(s, tmp_path / "layout")
    got = {
        (r["run"], r["metric"], r["topic"]): r["value"]
        for r in backend.evaluate(
            spark, tmp_path / "layout", qrels="q", metrics=metrics, write=False, options=EvalOptions(**options)
        ).collect()
    }
    names = ref.stored_names
    for run, topic, metric, value in ref.per_topic:
        other = got[(run, names[metric], topic)]
        assert (other is None and value is None) or other == pytest.approx(value, abs=1e-12), (run, metric, topic)
    return len(ref.per_topic)


@pytest.mark.slow
def test_trec_eval_conformance_inputs_through_spark(spark, tmp_path):
    """trec_eval's own test inputs (tests/conformance/test_trec_eval.py checks DuckDB against trec_eval's
    outputs): Spark gives DuckDB's values for every measure of trec_eval's all_trec (about 100
    blocks, computed 8 per Spark query), on graded qrels, with -c."""
    qrels, run = TREC_EVAL_FIXTURES / "qrels.rel_level", TREC_EVAL_FIXTURES / "results.test"
    n = _compare(spark, tmp_path, qrels, [run], ["all_trec"], complete=True)
    assert n > 250  # every all_trec measure x topic of the case

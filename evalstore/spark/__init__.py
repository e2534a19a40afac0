"""A Spark backend: the same SQL files, run by Spark SQL over a store's Parquet layout.

``evaluate(spark, DIR, qrels=..., metrics=[...], runs=None, options=EvalOptions(...))`` reads the layout written by
``evalstore export store DIR`` (or by other tools, docs/scale.md), renders the ranked judged list
and the metric blocks exactly as the DuckDB engine does (:func:`evalstore.metrics.ranked_list.render`,
:func:`evalstore.metrics.engine.unit_sql`), translates each statement from DuckDB's SQL dialect to
Spark's with sqlglot, runs them, and writes the per-topic scores as Parquet under
``DIR/spark_scores/<qrels>/`` (columns run, qrels, metric, topic, value, aggregate, params);
``evalstore import scores DIR`` stores them. Metrics whose SQL calls Python functions (P-plus,
NDPM, ...) or uses constructs without a Spark equivalent are refused with a message naming them
(``evalstore metrics`` lists which are which: column ``spark``).

Requires the optional extra: ``pip install "evalstore[spark]"`` (pyspark, sqlglot) and Java.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..base.aggregate import aggregate
from ..errors import MetricError, StoreError
from ..metrics import engine
from ..metrics.gains import stored_gains
from ..metrics.options import EvalOptions
from ..metrics.ranked_list import render
from ..metrics.registry import spark_support
from ..results.eval_result import EvalResult, result_of_rows

_BLOCKS_PER_QUERY = 8


supported = spark_support  # None when the metric runs on Spark, else why not


def _views(spark: Any, folder: Path, qrels: str, runs: list[str] | None) -> tuple[list[int], int]:
    """Temporary views over the layout with the names and columns the SQL files read."""

    def read(name: str):
        return spark.read.parquet(str(folder / name))

    read("qrels_meta.parquet").createOrReplaceTempView("_layout_qrels_meta")
    spark.sql(
        "SELECT CAST(row_number() OVER (ORDER BY name) AS INT) AS qrels_id, * FROM _layout_qrels_meta"
    ).createOrReplaceTempView("qrels_meta")
    read("run_meta.parquet").createOrReplaceTempView("_layout_run_meta")
    spark.sql(
        "SELECT CAST(row_number() OVER (ORDER BY name) AS INT) AS run_id, * FROM _layout_run_meta"
    ).createOrReplaceTempView("run_meta")
    read("qrels").createOrReplaceTempView("_layout_qrels")
    spark.sql(
        "SELECT m.qrels_id, q.topic, q.doc, CAST(q.grade AS INT) AS grade FROM _layout_qrels q "
        "JOIN qrels_meta m ON m.name = CAST(q.qrels AS STRING)"
    ).createOrReplaceTempView("qrels_data")
    read("runs").createOrReplaceTempView("_layout_runs")
    spark.sql(
        "SELECT m.run_id, r.topic, r.doc, r.rank, r.line_no, r.submitted_rank, r.score FROM _layout_runs r "
        "JOIN run_meta m ON m.name = CAST(r.run AS STRING)"
    ).createOrReplaceTempView("run_row_data")
    spark.sql(
        "SELECT CAST(NULL AS INT) AS qrels_id, CAST(NULL AS INT) AS parent_id WHERE false"
    ).createOrReplaceTempView("subsample_meta")
    found = spark.sql("SELECT qrels_id FROM qrels_meta WHERE name = :n", args={"n": qrels}).collect()
    if not found:
        raise StoreError(f"the layout in {folder} has no qrels set named {qrels!r}")
    rows = spark.sql("SELECT run_id, name FROM run_meta").collect()
    known = {r["name"]: r["run_id"] for r in rows}
    if runs is not None:
        missing = [r for r in runs if r not in known]
        if missing:
            raise StoreError(f"the layout in {folder} has no run named {', '.join(map(repr, missing))}")
        return [known[r] for r in runs], found[0]["qrels_id"]
    return sorted(known.values()), found[0]["qrels_id"]


def _to_spark(sql: str) -> str:
    """DuckDB SQL as Spark SQL. Decimal literals become doubles (DuckDB computes ``1.0 - x`` in
    double precision, Spark in DECIMAL, which rounds: infAP differed in the 9th digit), and
    DuckDB's ``error(msg)`` becomes Spark's ``raise_error(msg)``."""
    import sqlglot
    from sqlglot import exp

    def doubles(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Literal) and not node.is_string and any(c in node.this for c in ".eE"):
            return exp.cast(node, "double")
        if isinstance(node, exp.Anonymous) and str(node.this).lower() == "error":  # DuckDB's error(msg)
            return exp.Anonymous(this="raise_error", expressions=node.expressions)
        if isinstance(node, exp.Length):  # the SQL files take len() of lists only: Spark's size()
            return exp.ArraySize(this=node.this)
        return node

    return sqlglot.parse_one(sql, read="duckdb").transform(doubles).sql(dialect="spark")


def evaluate(
    spark: Any,
    folder: str | os.PathLike,
    *,
    qrels: str,
    metrics: list[str] | str,
    runs: list[str] | None = None,
    options: EvalOptions = EvalOptions(),
    write: bool = True,
) -> Any:
    """Per-topic scores (a Spark DataFrame: run, qrels, metric, topic, value, aggregate, params) of
    ``metrics`` for ``runs`` (default all) against ``qrels``, computed by Spark SQL from the SQL
    files; written to ``DIR/spark_scores/<qrels>/`` unless ``write=False``."""
    return _evaluate(spark, folder, qrels, metrics, runs, options, write)[0]


def evaluate_result(
    spark: Any,
    folder: str | os.PathLike,
    *,
    qrels: str,
    metrics: list[str] | str,
    runs: list[str] | None = None,
    options: EvalOptions = EvalOptions(),
    write: bool = True,
) -> EvalResult:
    """:func:`evaluate` as an :class:`~evalstore.results.eval_result.EvalResult` (the shape of every other
    evaluation: per-topic rows and means by :mod:`evalstore.base.aggregate`, metrics in request order,
    runs as given, else by name), collected to the driver."""
    scores, stored = _evaluate(spark, folder, qrels, metrics, runs, options, write)
    key_of = {n.metric: n.key for n in stored.values()}  # the stored name is one key's
    rows = [
        (r["run"], r["topic"], key_of[r["metric"]], r["value"])
        for r in scores.select("run", "topic", "metric", "value").collect()
    ]
    names = list(runs) if runs else sorted({r[0] for r in rows})
    return result_of_rows(qrels, stored, names, rows)


def _evaluate(
    spark: Any,
    folder: str | os.PathLike,
    qrels: str,
    metrics: list[str] | str,
    runs: list[str] | None,
    options: EvalOptions,
    write: bool,
) -> tuple[Any, dict[str, engine.StoredName]]:
    """The scores DataFrame and how each requested metric (display name) is stored."""
    options = options.with_pool(False)
    if options.convention != "trec_eval":
        raise MetricError("the Spark backend runs the trec_eval convention only (file order needs line numbers)")
    instances = engine.resolve_metrics(metrics)
    refused = [f"{i.display}: {why}" for i in instances if (why := supported(i.spec))]
    if refused:
        raise MetricError("not available on Spark: " + "; ".join(refused) + " (evaluate them with DuckDB)")
    src = Path(folder)
    run_ids, qid = _views(spark, src, qrels, runs)
    meta = spark.sql("SELECT default_gains, max_grade FROM qrels_meta WHERE qrels_id = :q", args={"q": qid}).collect()[
        0
    ]
    declared = stored_gains(meta["default_gains"])
    units, names = engine.plan([qid], instances, options, {qid: declared})
    rank_source = "SELECT run_id, topic, doc, rank, score FROM run_row_data WHERE run_id IN ({})".format(
        ", ".join(map(str, run_ids))
    )
    frames = []
    for unit in units:
        gains = unit.context.gains
        gmax = max(gains) if gains else float(meta["max_grade"] or 1)
        sql = engine.unit_sql(unit, options, gmax, inline_user=True)
        for name, body in render([qid], run_ids, unit.context, sql.options, sql.columns, rank_source, as_ctes=True):
            # computed once and cut from its lineage: every block of the pass reads it, and Spark
            # would otherwise analyse and optimise the whole chain of views again for each chunk
            spark.sql(_to_spark(body)).localCheckpoint(eager=True).createOrReplaceTempView(name)
        # a few blocks per query, each chunk computed and cut from its lineage: one query with a
        # hundred blocks (trec_eval's all_trec) exhausts the driver's heap while Spark plans it
        for start in range(0, len(sql.selects), _BLOCKS_PER_QUERY):
            chunk = "\nUNION ALL\n".join(sql.selects[start : start + _BLOCKS_PER_QUERY])
            try:
                frames.append(spark.sql(_to_spark(chunk)).localCheckpoint(eager=True))
            except Exception as e:  # Spark's analysis errors: a construct without a Spark equivalent
                failed = ", ".join(i.display for i in unit.instances)
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise MetricError(f"not available on Spark: {failed} ({first}); evaluate them with DuckDB") from None
    result = frames[0]
    for f in frames[1:]:
        result = result.unionByName(f)
    result.createOrReplaceTempView("_spark_scores")
    keys = {n.key: n for n in names.values()}
    spark.createDataFrame(
        [(k, n.metric, n.aggregate, json.dumps(n.params, sort_keys=True)) for k, n in keys.items()],
        "key STRING, metric STRING, aggregate STRING, params STRING",
    ).createOrReplaceTempView("_spark_names")
    out = spark.sql(
        "SELECT r.name AS run, :qrels AS qrels, n.metric, s.topic, s.value, n.aggregate, n.params "
        "FROM _spark_scores s JOIN run_meta r ON r.run_id = s.run_id JOIN _spark_names n ON n.key = s.key",
        args={"qrels": qrels},
    )
    if write:
        out.write.mode("overwrite").parquet(str(src / "spark_scores" / qrels))
    return out, {i.display: names[(qid, i.display)] for i in instances}


def session(master: str = "local[2]") -> Any:
    """A local Spark session for the command line (quiet, no UI, few shuffle partitions)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise StoreError('the Spark backend needs the spark extra: pip install "evalstore[spark]" (and Java)') from None
    spark = (
        SparkSession.builder.master(master)
        .appName("evalstore")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def means(scores: Any) -> list[tuple[str, str, float, int]]:
    """``(run, metric, summary, n_topics)`` of a scores DataFrame, with the metrics' aggregates."""

    groups: dict[tuple[str, str], tuple[str, list[float]]] = {}
    for r in scores.select("run", "metric", "value", "aggregate").collect():
        groups.setdefault((r["run"], r["metric"]), (r["aggregate"], []))[1].append(r["value"])
    return [(run, m, aggregate(v, agg), len(v)) for (run, m), (agg, v) in sorted(groups.items())]

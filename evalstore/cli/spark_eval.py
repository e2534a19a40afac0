"""`evalstore eval --engine spark --data DIR`: the Spark backend from the command line."""

from __future__ import annotations

from ..results.eval_result import EvalResult
from .output import say


def spark_eval(folder: str, qrels: str, runs: list[str] | None, metrics: list[str], options: dict) -> EvalResult:
    """`evalstore eval --engine spark --data DIR`: Spark SQL over the layout; its scores are written
    beside the layout for `evalstore import scores`."""
    from .. import spark as spark_backend  # pyspark is optional: imported only for --engine spark

    result = spark_backend.evaluate_result(
        spark_backend.session(), folder, qrels=qrels, metrics=metrics, runs=runs, **options
    )
    say(f"wrote {folder}/spark_scores/{qrels}; store them with `evalstore import scores {folder}`")
    return result

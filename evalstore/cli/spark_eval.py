"""`evalstore eval --engine spark --data DIR`: the Spark backend from the command line."""

from __future__ import annotations

from ..report.table import Table
from .output import say


def spark_eval(folder: str, qrels: str, runs: list[str] | None, metrics: list[str], options: dict) -> Table:
    """`evalstore eval --engine spark --data DIR`: Spark SQL over the layout; a leaderboard."""
    from .. import spark as spark_backend  # pyspark is optional: imported only for --engine spark

    s = spark_backend.session()
    scores = spark_backend.evaluate(s, folder, qrels=qrels, metrics=metrics, runs=runs, **options)
    rows = spark_backend.means(scores)
    names = list(dict.fromkeys(m for _, m, _, _ in rows))
    table: dict[str, dict[str, float]] = {}
    for run, m, v, _ in rows:
        table.setdefault(run, {})[m] = v
    say(f"wrote {folder}/spark_scores/{qrels}; store them with `evalstore import scores {folder}`")
    rows_out = [(r, *[table[r].get(m) for m in names]) for r in sorted(table)]
    return Table(["run", *names], rows_out, title=f"Spark: {qrels}")

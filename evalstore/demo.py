"""``evalstore demo``: the bundled sample collection, end to end."""

from __future__ import annotations

import typer

from .resources import sample_dir

DEMO_METRICS = ["AP", "nDCG@10", "P@10", "RR", "R@50"]
DEMO_QUERY = (
    "SELECT run, round(avg(value), 4) AS mean_nDCG10, round(min(value), 4) AS worst_topic, "
    "count(*) FILTER (WHERE value = 0) AS topics_at_zero FROM scores "
    "WHERE metric LIKE 'nDCG%@10' GROUP BY run ORDER BY mean_nDCG10 DESC"
)


def run_demo(db: str | None = None, out=None) -> None:
    import evalstore

    from .cli.output import render
    from .export import leaderboard_rows

    echo = (lambda s: typer.echo(s, file=out)) if out else typer.echo
    store = evalstore.open(db or ":memory:")
    try:
        sample = sample_dir()
        for r in store.ingest_qrels(sample / "qrels.txt", name="sample", progress=False):
            echo(r.summary())
        for r in store.ingest_run(sorted((sample / "runs").glob("*.txt")), progress=False):
            echo(r.summary())
        echo("")
        res = store.sql("SELECT name, n_topics, n_rows FROM runs ORDER BY name")
        render(res.columns, res.rows, "table", title="stored runs", out=out)
        echo(f"\n$ evalstore eval --qrels sample -m {' -m '.join(DEMO_METRICS)}")
        result = store.evaluate("sample", None, DEMO_METRICS)
        cols, rows = leaderboard_rows(result)
        render(cols, rows, "table", title="leaderboard (qrels: sample)", out=out)
        echo(f'\n$ evalstore sql "{DEMO_QUERY}"')
        res = store.sql(DEMO_QUERY)
        render(res.columns, res.rows, "table", digits=4, out=out)
    finally:
        store.close()

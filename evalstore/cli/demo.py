"""``evalstore demo``: the bundled sample collection, end to end."""

from __future__ import annotations

import shlex
import sys
from typing import IO

from ..base.resources import sample_dir
from ..output.formats import write
from ..output.table import Table
from ..results import tables
from ..store import open as open_store

#: Where the demo's store goes unless --db says otherwise (in the current folder, to explore afterwards).
DEMO_DB = "evalstore-demo.duckdb"
DEMO_METRICS = ["AP", "nDCG@10", "P@10", "RR", "R@50"]
DEMO_QUERY = (
    "SELECT run, round(avg(value), 4) AS mean_nDCG10, round(min(value), 4) AS worst_topic, "
    "count(*) FILTER (WHERE value = 0) AS topics_at_zero FROM scores "
    "WHERE metric = 'nDCG@10' GROUP BY run ORDER BY mean_nDCG10 DESC"
)

TRY_QUERY = "SELECT topic, run, value FROM scores WHERE metric = 'AP' ORDER BY value LIMIT 5"


def run_demo(db: str | None = None, out: IO[str] | None = None) -> str:
    """Ingest the sample into the store ``db`` (default ``./evalstore-demo.duckdb``; ingesting it
    again is a no-op), evaluate it, print the leaderboard, an SQL query over the scores and three
    commands to try on the store. Returns the store's location."""
    out = out or sys.stdout
    db = db or DEMO_DB

    def echo(s: str) -> None:
        out.write(s + "\n")

    store = open_store(db)
    try:
        sample = sample_dir()
        for r in store.ingest_qrels(sample / "qrels.txt", name="sample", progress=False):
            echo(r.summary())
        for r in store.ingest_run(sorted((sample / "runs").glob("*.txt")), progress=False):
            echo(r.summary())
        echo("")
        res = store.sql("SELECT name, n_topics, n_rows FROM runs ORDER BY name")
        write(Table(res.columns, res.rows, title="stored runs"), "table", out)
        echo(f"\n$ evalstore eval --qrels sample -m {' -m '.join(DEMO_METRICS)}")
        result = store.evaluate("sample", None, DEMO_METRICS)
        write(tables.leaderboard(result, title="leaderboard (qrels: sample)"), "table", out)
        echo(f'\n$ evalstore sql "{DEMO_QUERY}"')
        res = store.sql(DEMO_QUERY)
        write(Table(res.columns, res.rows), "table", out)
    finally:
        store.close()
    flag = "" if db == ":memory:" else f" --db {shlex.quote(db)}"
    if flag:
        echo(f"\nThe store is {db}. Try:")
        echo(f"  evalstore eval{flag} -m 'AP(rel=2)' -m nDCG@5 -r bm25 -r rerank --per-topic")
        echo(f"  evalstore meta kendall{flag} --qrels sample -m AP -m nDCG@10 -m P@10")
        echo(f'  evalstore sql{flag} "{TRY_QUERY}"')
    return db

"""``evalstore demo``: the bundled sample collection, end to end; ``evalstore demo --answers``: the
bundled RAG sample (generated answers, nuggets, support labels)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import IO

from ..base.resources import rag_sample_dir, sample_dir
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


def run_demo(
    db: str | None = None,
    out: IO[str] | None = None,
    *,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
    wait: float | None = None,
) -> str:
    """Ingest the sample into the store ``db`` (default ``./evalstore-demo.duckdb``; ingesting it
    again is a no-op), evaluate it, print the leaderboard, an SQL query over the scores and three
    commands to try on the store (the resource settings as :func:`evalstore.open`'s). Returns the
    store's location."""
    out = out or sys.stdout
    db = db or DEMO_DB

    def echo(s: str) -> None:
        out.write(s + "\n")

    store = open_store(db, memory_limit=memory_limit, threads=threads, temp_directory=temp_directory, wait=wait)
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


#: Where the answers demo's store goes unless --db says otherwise.
RAG_DEMO_DB = "evalstore-rag-demo.duckdb"
RAG_METRICS = ["strict_vital", "vital"]


def ingest_rag_sample(store, sample: Path | None = None) -> list[str]:
    """Ingest the bundled RAG sample (evalstore/data/rag/README.md) into ``store``: topics, document
    texts, qrels, the answers of its runs, the nugget set, the manual and automatic assignment sets
    and support sets. Returns the summaries (ingesting it again is a no-op)."""
    d = sample or rag_sample_dir()
    results = [
        store.ingest_topics(d / "topics.tsv", name="rag"),
        store.ingest_docs(d / "docs.tsv", name="rag"),
        *store.ingest_qrels(d / "qrels.txt", name="qrels", progress=False),
        *store.ingest_answers(sorted((d / "answers").glob("*.jsonl"))),
        store.ingest_nuggets(d / "nuggets.jsonl", name="nuggets"),
    ]
    for who in ("manual", "auto"):
        results.append(store.ingest_assignments(d / f"assignments.{who}.jsonl", nuggets="nuggets", name=who))
        results.append(store.ingest_support(d / f"support.{who}.jsonl", name=f"support.{who}"))
    return [r.summary() for r in results]


def run_rag_demo(
    db: str | None = None,
    out: IO[str] | None = None,
    *,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
    wait: float | None = None,
) -> str:
    """The answers demo: ingest the bundled RAG sample into ``db`` (default
    ``./evalstore-rag-demo.duckdb``), evaluate the answers by their nuggets (manual assignments,
    with bootstrap intervals of the means and of the ranks), by their citations' support and by what they
    cite (nDCG@10 of the references against the qrels), and compare the automatic assignments
    with the manual ones (the resource settings as :func:`evalstore.open`'s). Returns the store's
    location."""
    out = out or sys.stdout
    db = db or RAG_DEMO_DB

    def show(title: str, table: Table) -> None:
        out.write(f"\n$ {title}\n")
        write(table, "table", out)

    store = open_store(db, memory_limit=memory_limit, threads=threads, temp_directory=temp_directory, wait=wait)
    try:
        for line in ingest_rag_sample(store):
            out.write(line + "\n")
        result = store.evaluate("manual", None, RAG_METRICS, ci="bootstrap", rank_ci="bootstrap")
        show(f"evalstore eval --qrels manual -m {' -m '.join(RAG_METRICS)} --ci bootstrap --rank-ci bootstrap",
             tables.leaderboard(result, title="nuggets (assignments: manual)"))  # fmt: skip
        support = store.evaluate("support.manual", None, ["support_precision", "support_recall"])
        show("evalstore eval --qrels support.manual -m support_precision -m support_recall",
             tables.leaderboard(support, title="citation support (labels: support.manual)"))  # fmt: skip
        cited = store.evaluate("qrels", None, ["nDCG@10"])
        title = "what the answers cite (references against the qrels)"
        show("evalstore eval --qrels qrels -m nDCG@10", tables.leaderboard(cited, title=title))
        a = store.agree("manual", "auto", ["strict_vital", "vital"], save=False)
        labels = a.labels.overall
        ranks = ", ".join(f"{r.metric}: tau_b {r.summary['tau_b']:.3f}" for r in a.ranking)
        out.write(
            f"\n$ evalstore agree --qrels manual --with auto -m strict_vital -m vital\n"
            f"labels: {labels['n_common']} common assignments, agreement {labels['agreement']:.3f}, "
            f"kappa {labels['kappa']:.3f}, alpha (ordinal) {labels['alpha_ordinal']:.3f}; rankings: {ranks}\n"
        )
    finally:
        store.close()
    if db != ":memory:":
        flag = f" --db {shlex.quote(db)}"
        out.write(f"\nThe store is {db}. Try:\n")
        out.write(f"  evalstore compare{flag} --qrels manual -b rag01 -m vital --format markdown\n")
        out.write(f"  evalstore sql{flag} \"SELECT * FROM nugget_assignments WHERE run = 'rag01' LIMIT 5\"\n")
        out.write(f"  evalstore serve{flag}   # the explorer: leaderboards, answers and their nuggets by topic\n")
    return db

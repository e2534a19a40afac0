"""``evalstore demo``: a store built from the bundled sample collection (:mod:`.demo`), in a module of its
own so that no other command imports the store to declare it."""

from __future__ import annotations

import typer

from . import options as opt
from .app import app
from .choices import flag
from .demo import run_demo, run_rag_demo


@app.command("demo")
def demo(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store file for the demo (default: ./evalstore-demo.duckdb, with --answers ./evalstore-rag-demo.duckdb; "
        "':memory:' keeps nothing).",
    ),
    answers: bool = flag(
        "--answers",
        help="The RAG sample instead: generated answers evaluated by their nuggets, their citations' support and "
        "what they cite, and the automatic nugget assignments against the manual ones.",
    ),
    memory_limit: str | None = opt.MemoryLimit,
    threads: int | None = opt.Threads,
    temp_dir: str | None = opt.TempDir,
    wait: float | None = opt.Wait,
) -> None:
    """Build a store from the bundled sample collection, evaluate it, show a leaderboard and a query,
    and print three commands to try on the store it leaves behind."""
    if answers:
        run_rag_demo(db, memory_limit=memory_limit, threads=threads, temp_directory=temp_dir, wait=wait)
    else:
        run_demo(db, memory_limit=memory_limit, threads=threads, temp_directory=temp_dir, wait=wait)

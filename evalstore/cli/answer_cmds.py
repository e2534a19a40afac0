"""Generated answers (TREC RAG): ``ingest answers|nuggets|assignments|support``, ``list nuggets``,
``drop nuggets``. Evaluating them is ``eval --qrels SET``, as for every judged set (docs/rag.md)."""

from __future__ import annotations

import typer

from . import options as opt
from .app import open_for_reading, open_store
from .choices import flag
from .output import OutputFile, emit, format_option, output_format
from .store_cmds import _summaries, _table, drop_app, drop_named, ingest_app, list_app

_FILES = "JSON-lines files or globs (- for standard input); .gz read transparently."


@ingest_app.command("answers")
@opt.shared(store_opts=opt.STORE)
def ingest_answers_cmd(
    files: list[str] = typer.Argument(..., help=_FILES),
    run: str | None = typer.Option(
        None,
        "--run",
        "-r",
        help="Name of the run (required for nuggetizer's answers form, which has no run_id; else renames the "
        "file's one run).",
    ),
    replace: bool = flag(
        "--replace", help="Replace a stored run of the same name (atomically; its stored scores are dropped)."
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest generated answers, one JSON object per line: TREC RAG's {run_id, topic_id, references, answer:
    [{text, citations}]} or nuggetizer's {topic_id, answer: [{text}]} with --run NAME.

    Each run becomes a run of kind answers whose ranked list is its references (so nDCG@20 of what an answer
    cites is an ordinary eval). One transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        results = store.ingest_answers(files, run=run, replace=replace)
    _summaries(results)


@ingest_app.command("nuggets")
@opt.shared(store_opts=opt.STORE)
def ingest_nuggets_cmd(
    files: list[str] = typer.Argument(..., help=_FILES),
    name: str | None = typer.Option(None, "--name", "-n", help="Nugget set name (default: the file name)."),
    replace: bool = flag("--replace", help="Replace a stored nugget set of the same name (atomically)."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest a nugget set: nuggetizer's nugget files, {qid, query, nuggets: [{text, importance: vital|okay}]}
    per line. Versions (manual, automatic, post-edited) are sets of their own names. One transaction."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_nuggets(files, name=name, replace=replace)
    _summaries([result])


@ingest_app.command("assignments")
@opt.shared(store_opts=opt.STORE)
def ingest_assignments_cmd(
    files: list[str] = typer.Argument(..., help=_FILES),
    nuggets: str = typer.Option(..., "--nuggets", help="The nugget set the assignments assign (by topic and text)."),
    name: str | None = typer.Option(
        None, "--name", "-n", help="Assignment set name (default: the file name); several files form one set."
    ),
    replace: bool = flag(
        "--replace", help="Replace a stored set of the same name (atomically; its stored scores are dropped)."
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest nugget assignments: nuggetizer's assignment output (answers mode), {qid, run_id, nuggets: [{text,
    importance, assignment: support|partial_support|not_support}]} per line.

    The set is a qrels set of kind nuggets: eval --qrels NAME -m strict_vital -m vital, compare, meta, agree.
    One transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_assignments(files, nuggets=nuggets, name=name, replace=replace)
    _summaries([result])


@ingest_app.command("support")
@opt.shared(store_opts=opt.STORE)
def ingest_support_cmd(
    files: list[str] = typer.Argument(..., help=_FILES),
    name: str | None = typer.Option(
        None, "--name", "-n", help="Support set name (default: the file name); several files form one set."
    ),
    replace: bool = flag(
        "--replace", help="Replace a stored set of the same name (atomically; its stored scores are dropped)."
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest citation support labels of stored answers: {run_id, topic_id, sentence, citation, label:
    full|partial|none} per line (citation: the index into the answer's references).

    The set is a qrels set of kind support: eval --qrels NAME -m support_precision -m support_recall.
    One transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_support(files, name=name, replace=replace)
    _summaries([result])


@list_app.command("nuggets")
@opt.shared(store_opts=opt.STORE)
def list_nuggets(
    fmt: str | None = format_option(), output: str | None = OutputFile, *, store_opts: opt.StoreOptions
) -> None:
    """List stored nugget sets."""
    fmt = output_format(fmt, output)
    with open_for_reading(store_opts) as store:
        res = store.list_nuggets()
    emit(_table(res, "nugget sets", digits=6), fmt, output)


@drop_app.command("nuggets")
@opt.shared(store_opts=opt.STORE)
def drop_nuggets(
    names: list[str] = typer.Argument(..., help="Nugget set names."),
    yes: bool = opt.Yes,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Remove nugget sets with their nuggets (one transaction; not while an assignment set uses them)."""
    drop_named("nuggets", names, yes, store_opts)

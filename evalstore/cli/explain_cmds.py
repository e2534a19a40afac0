"""``evalstore explain``: one metric of one run on one topic, rank by rank (:mod:`evalstore.explain.explanation`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from .. import store as store_module
from ..evaluation.default_qrels import default_qrels
from ..explain.explanation import explainable
from ..explain.tables import conventions_report, explanation_report
from ..metrics.options import EvalOptions
from ..output.formats import OUTPUT_FORMATS
from . import options as opt
from . import ranges
from .app import app, open_for_reading
from .choices import flag
from .inputs import spooled
from .output import OutputFile, emit, format_option, output_format
from .ranges import number


@app.command("explain")
@opt.shared(ev=opt.EVALUATION, store_opts=opt.STORE)
def explain_cmd(
    metric: str = typer.Argument(..., help="The metric, e.g. AP, nDCG@10, ERR@20, P(rel=2)@10, map, ndcg_cut_10."),
    files: list[str] | None = typer.Argument(
        None,
        metavar="QRELS_FILE RUN_FILE",
        help="A qrels file and a run file to explain without a store (- reads one from stdin). "
        "Without files: a run of the store against --qrels.",
    ),
    qrels: str | None = opt.QrelsDefault,
    run: str | None = typer.Option(None, "--run", "-r", help="Run name (default: the store's only run)."),
    topic: str = typer.Option(..., "--topic", help="The topic to explain."),
    compare: bool = flag(
        "--compare-conventions",
        help="Show the case under every convention: each one's order, depth and value, and the documents "
        "whose rank differs.",
    ),
    rows: int | None = number(
        None,
        "--rows",
        range=ranges.ROWS,
        help="Rows to show (default: through the last rank that contributes or the cutoff, and a few more).",
    ),
    all_rows: bool = flag("--all", help="Show every retrieved document."),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    *,
    ev: EvalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Explain a score: for one metric, run and topic, each retrieved document in evaluation order with
    its grade, gain, discount, contribution and the running value, the ideal list where the metric has
    one, and the final value (eval's, from the same SQL block). Metrics: see `evalstore explain --help`."""
    fmt = output_format(fmt, output)
    if files and (qrels or run):
        raise typer.BadParameter("with files, leave out --qrels and --run", param_hint="FILES")
    if files is not None and len(files) not in (0, 2):
        raise typer.BadParameter("give a qrels file and one run file", param_hint="FILES")
    with _source(files, store_opts) as store:
        q = qrels or default_qrels(store, [metric])
        r = run or _only_run(store)
        if compare:
            cases = store.compare_conventions(metric, q, r, topic, options=ev)
            report = conventions_report(cases)
        else:
            ex = store.explain(metric, q, r, topic, options=ev)
            # programs get every row unless --rows says otherwise
            everything = all_rows or (rows is None and OUTPUT_FORMATS[fmt].kind == "data")
            report = explanation_report(ex, rows, everything)
    emit(report, fmt, output)


explain_cmd.__doc__ = (explain_cmd.__doc__ or "").replace(
    "Metrics: see `evalstore explain --help`.", "Metrics: " + ", ".join(explainable()) + "."
)


@contextmanager
def _source(files: list[str] | None, store_opts: opt.StoreOptions) -> Iterator[store_module.Store]:
    """The store of --db, or a store in memory holding the two files."""
    if not files:
        with open_for_reading(store_opts) as store:
            yield store
        return
    with spooled(files) as paths, store_module.open(":memory:") as store:
        store.ingest_qrels(paths[0], name="stdin" if files[0] == "-" else os.path.basename(files[0]), progress=False)
        store.ingest_run(paths[1], name="stdin" if files[1] == "-" else os.path.basename(files[1]), progress=False)
        yield store


def _only_run(store: store_module.Store) -> str:
    names = store.run_names()
    if len(names) != 1:
        shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        raise typer.BadParameter(
            f"the store holds {len(names)} runs ({shown}); choose one with --run", param_hint="--run"
        )
    return names[0]

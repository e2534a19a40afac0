"""`evalstore fuse` (runs made from runs, :mod:`evalstore.fusion`) and `evalstore export run` (a
stored run as a TREC run file, :mod:`evalstore.ingest.run_export`)."""

from __future__ import annotations

import typer

from ..fusion.recipe import RANK_SOURCES
from ..fusion.registry import METHOD_ALIASES, METHODS, NORM_ALIASES, NORMALIZATIONS, methods_help, norms_help
from . import options as opt
from . import ranges
from .app import app, open_for_reading, open_store
from .choices import choice, flag
from .eval_cmds import export_app
from .output import check_writable, emit, format_option, output_format, say
from .ranges import number


@app.command(
    "fuse",
    help=(
        "Fuse stored runs into a new run, in SQL for all topics at once (ranx's methods and normalisations), "
        "and store it with its recipe: `evalstore list runs` and the runs relation show how it was made "
        "(recipe, fusion, stale), its ir_metadata header records it. --optimize chooses the weights (or k, "
        "phi, ...) on a qrels set by ranx's grid search. --refresh makes a stale fused run again."
    ),
)
@opt.shared(store=opt.STORE)
def fuse_cmd(
    run: list[str] | None = typer.Option(None, "--run", "-r", help="An input run; repeat (two or more, in order)."),
    method: str | None = choice(
        None, "--method", choices=list(METHODS), aliases=METHOD_ALIASES, help="Fusion method: " + methods_help()
    ),
    name: str = typer.Option(..., "--name", "-n", help="Name of the fused run."),
    norm: str | None = choice(
        None,
        "--norm",
        choices=list(NORMALIZATIONS),
        aliases=NORM_ALIASES,
        help="Score normalisation per run and topic (default: min-max for methods of scores, as ranx; none for "
        "methods of ranks): " + norms_help(),
    ),
    param: list[str] | None = typer.Option(
        None, "--param", help="A parameter of the method, NAME=VALUE (k=60, phi=0.8, gamma=0.5, sigma=0.01)."
    ),
    weights: str | None = typer.Option(
        None, "--weights", help="Weights of the runs, in the order of -r (weighted methods), e.g. 0.5,0.3,0.2."
    ),
    depth: int | None = number(
        None, "--depth", "-M", range=ranges.DEPTH, help="Fuse only the top D documents of each run per topic."
    ),
    top: int | None = number(None, "--top", range=ranges.DEPTH, help="Keep the top K fused documents per topic."),
    ranks: str = choice(
        "evaluation",
        "--ranks",
        choices=RANK_SOURCES,
        help="The ranks that rank-based methods read: evaluation (score descending, docno descending, as "
        "evalstore evaluates) or submitted (the rank column as written, as Pyserini reads it).",
    ),
    replace: bool = flag("--replace", help="Replace a stored run of the same name."),
    optimize: str | None = typer.Option(
        None,
        "--optimize",
        help="Choose the weights (or the method's parameter) that maximise this metric's mean on --qrels, by "
        "a grid search (ranx's optimize_fusion); every candidate is evaluated in one pass.",
    ),
    qrels: str | None = typer.Option(None, "--qrels", "-q", help="The qrels set --optimize chooses on."),
    step: float | None = number(
        None, "--step", range=ranges.STEP, help="Grid step of --optimize (weights: 0.1; rrf k: 10; rbc phi: 0.01)."
    ),
    refresh: bool = flag(
        "--refresh", help="Make the fused run --name again from its recipe over its inputs as they are now."
    ),
    allow_disjoint: bool = flag(
        "--allow-disjoint",
        help="Fuse runs even if one shares no topic with the others (runs of different collections are refused).",
    ),
    fmt: str | None = format_option(extra_help=" (The grid of --optimize.)"),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write the grid of --optimize to this file (format: --format or the extension)."
    ),
    *,
    store: opt.StoreOptions,
) -> None:
    """Fuse stored runs; the fused run is stored with its recipe."""
    chosen = output_format(fmt, output)
    if (fmt or output) and not optimize:
        raise typer.BadParameter("--format and -o write the grid of --optimize", param_hint="--format/--output")
    if refresh and (run or method or optimize):
        raise typer.BadParameter("--refresh takes only --name: the recipe is stored", param_hint="--refresh")
    if not refresh and (not run or not method):
        raise typer.BadParameter("give the input runs (-r A -r B) and --method", param_hint="--run/--method")
    with open_store(store) as s:
        if refresh:
            result = s.refresh_fusion(name)
        else:
            result = s.fuse(
                run or [], method or "", name=name, norm=norm, params=param, weights=weights, depth=depth, top=top,
                ranks=ranks, replace=replace, optimize=optimize, qrels=qrels, step=step, allow_disjoint=allow_disjoint,
            )  # fmt: skip
    if result.optimization is not None:
        emit(result.optimization.table(), chosen, output)
    for note in result.notes:
        say(f"note: {note}")
    say(result.summary())


@export_app.command("run")
@opt.shared(store=opt.STORE)
def export_run_cmd(
    name: str = typer.Argument(..., help="The stored run (see `evalstore list runs`)."),
    output: str | None = typer.Option(
        None, "--output", "-o", help="The run file to write (.gz: gzipped; default: standard output)."
    ),
    tag: str | None = typer.Option(None, "--tag", help="The tag column (default: the run's tag, else its name)."),
    *,
    store: opt.StoreOptions,
) -> None:
    """Write a stored run as a TREC run file. An ingested TREC run file comes back byte for byte (its sha256 is
    runs.sha256: header, separators, scores as spelt, line ends); a fused run as the file its sha256 is of (its
    recipe as the ir_metadata header); other runs (DataFrames, NTCIR res files, stores from before schema 17) as
    evalstore's lines: topic Q0 doc rank score tag."""
    if output and output != "-":
        check_writable(output, "--output")
    with open_for_reading(store) as s:
        exported = s.export_run(name, None if output in (None, "-") else output, tag=tag)
    if exported.path is not None:
        say(exported.summary())

"""Pool commands: `evalstore pool` (build a pool from stored runs) and its sub-commands (list,
show, coverage), `evalstore export pool` (the file for the assessors) and `evalstore drop pool`.
Each calls a method of the store (:mod:`evalstore.pool`); docs/pools.md has the definitions."""

from __future__ import annotations

import typer

from ..pool import RANK_SOURCES, RBP_AGGREGATES, STRATEGIES
from ..pool.render import coverage_report, pools_table, topics_report
from . import options as opt
from . import ranges
from .app import CONTEXT, app, open_for_reading, open_store
from .choices import choice, flag
from .eval_cmds import export_app
from .help_format import HelpGroup
from .output import OutputFile, UsageProblem, check_writable, emit, format_option, output_format, say
from .ranges import number
from .store_cmds import drop_app, drop_named

pool_app = typer.Typer(
    cls=HelpGroup,
    help="Build a judgment pool from the stored runs, as trectools' TrecPoolMaker defines it, and list, show or "
    "cover it.\n\nBuild: evalstore pool --name NAME [-r RUN...] [--strategy depth|rbp|rrf] [--depth K] [--p 0.8] "
    "[--rbp-agg sum|max] [--k 60] [--exclude-judged QRELS]. depth: the union of every run's top K; rbp: the K "
    "documents per topic with the highest sum (or max) over runs of (1-p) p^(rank-1); rrf: the K with the highest "
    "sum of 1/(k + rank). Then `evalstore export pool NAME -o FILE` writes what the assessors get.",
    invoke_without_command=True,
    context_settings=CONTEXT,
)
app.add_typer(pool_app, name="pool")

PoolName = typer.Argument(..., help="The pool (see `evalstore pool list`).")


@pool_app.callback()
@opt.shared(store_opts=opt.STORE)
def build(
    ctx: typer.Context,
    name: str | None = typer.Option(None, "--name", "-n", help="Name of the pool to build."),
    run: list[str] | None = typer.Option(None, "--run", "-r", help="A run to pool; repeat (default: all runs)."),
    strategy: str = choice(
        "depth",
        "--strategy",
        choices=STRATEGIES,
        help="depth: the union of every run's top K (trectools' topX); rbp: the top K by RBP weight over the runs; "
        "rrf: the top K by reciprocal rank fusion.",
    ),
    depth: int = number(
        10,
        "--depth",
        range=ranges.DEPTH,
        help="K: each run's top K (depth), or the documents kept per topic (rbp, rrf).",
    ),  # fmt: skip
    p: float | None = number(None, "--p", range=ranges.PROBABILITY, help="RBP's persistence p (rbp; default 0.8)."),
    rbp_agg: str | None = choice(
        None, "--rbp-agg", choices=RBP_AGGREGATES, help="How rbp combines the runs' weights: sum (default) or max."
    ),
    k: float | None = number(None, "--k", range=ranges.RRF_K, help="RRF's k in 1/(k + rank) (rrf; default 60)."),
    ranks: str = choice(
        "evaluation",
        "--ranks",
        choices=RANK_SOURCES,
        help="The ranks read: evaluation (score descending, docno descending, as trec_eval) or submitted (the "
        "rank column as written, which trectools reads for rbp and rrf).",
    ),
    exclude_judged: str | None = typer.Option(
        None,
        "--exclude-judged",
        metavar="QRELS",
        help="Leave out the documents this qrels set judges already (grade >= 0): the next round of judging.",
    ),
    replace_pool: bool = flag("--replace", help="Replace a pool of the same name."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Build a pool, or run a sub-command (list, show, coverage)."""
    ctx.obj = {"db": store_opts.db}
    given = name or run or p is not None or rbp_agg or k is not None or exclude_judged or replace_pool
    if ctx.invoked_subcommand is not None:
        if given:
            raise typer.BadParameter(f"the options that build a pool do not go with `pool {ctx.invoked_subcommand}`")
        return
    if not name:
        if not given:
            typer.echo(ctx.get_help())
            raise typer.Exit(0)
        raise UsageProblem("building a pool needs --name NAME")
    with open_store(store_opts) as store:
        result = store.pool(
            name, run or None, strategy=strategy, depth=depth, p=p, rbp_agg=rbp_agg, k=k, ranks=ranks,
            exclude_judged=exclude_judged, replace=replace_pool,
        )  # fmt: skip
    say(result.summary())


@pool_app.command("list")
@opt.shared(store_opts=opt.STORE)
def list_cmd(
    ctx: typer.Context,
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """List the stored pools (the `pool_sets` relation)."""
    chosen = output_format(fmt, output)
    with open_for_reading(store_opts.in_group(ctx)) as store:
        rows = store.list_pools().records()
    emit(pools_table(rows), chosen, output)


@pool_app.command("show")
@opt.shared(store_opts=opt.STORE)
def show_cmd(
    ctx: typer.Context,
    name: str = PoolName,
    qrels: str | None = typer.Option(
        None, "--qrels", "-q", help="Count the judged and relevant documents of this set."
    ),
    rel: int = number(1, "--rel", range=ranges.GRADE, help="The lowest relevant grade."),
    fmt: str | None = format_option(extra_help=" json: the sizes as one document."),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """A pool's size per topic (with --qrels: how many of its documents are judged, and relevant)."""
    chosen = output_format(fmt, output)
    with open_for_reading(store_opts.in_group(ctx)) as store:
        sizes = store.pool_sizes(name, qrels=qrels, rel=rel)
    emit(topics_report(sizes), chosen, output)


@pool_app.command("coverage")
@opt.shared(store_opts=opt.STORE)
def coverage_cmd(
    ctx: typer.Context,
    name: str = PoolName,
    qrels: str | None = typer.Option(
        None, "--qrels", "-q", help="Add Judged@k and the judged and relevant unique documents of this set."
    ),
    run: list[str] | None = typer.Option(
        None, "--run", "-r", help="A run to report; repeat (default: the pool's runs; any stored run may be given)."
    ),
    k: int | None = number(
        None, "--k", "-k", range=ranges.DEPTH, help="The depth of pooled@k and judged@k (default: the pool's depth)."
    ),  # fmt: skip
    rel: int = number(1, "--rel", range=ranges.GRADE, help="The lowest relevant grade."),
    fmt: str | None = format_option(extra_help=" json: the coverage as one document."),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Per run: the share of its top k in the pool (and, with --qrels, judged: Judged@k, stored as a
    score), the documents it brought into the pool, those only it brought, and how many of those are
    judged and relevant."""
    chosen = output_format(fmt, output)
    with open_store(store_opts.in_group(ctx)) as store:
        cov = store.pool_coverage(name, run or None, qrels=qrels, k=k, rel=rel)
    emit(coverage_report(cov), chosen, output)


@export_app.command("pool")
@opt.shared(store=opt.STORE)
def export_pool_cmd(
    name: str = PoolName,
    output: str | None = typer.Option(None, "--output", "-o", help="The file to write (default: standard output)."),
    pairs: bool = flag("--pairs", help="Write `topic doc` lines instead of qrels lines `topic 0 doc -1`."),
    *,
    store: opt.StoreOptions,
) -> None:
    """Write a pool for the assessors: TREC qrels lines `topic 0 doc -1` (-1: pooled, not judged yet, as
    trec_eval reads it) or `topic doc` pairs, sorted by topic and docno, so the order reveals no run;
    written to a temporary file and renamed into place."""
    if output and output != "-":
        check_writable(output, "--output")
    with open_for_reading(store) as s:
        exported = s.export_pool(name, None if output in (None, "-") else output, format="pairs" if pairs else "qrels")
    if exported.path is not None:
        say(exported.summary())


@drop_app.command("pool")
@opt.shared(store_opts=opt.STORE)
def drop_pool(
    names: list[str] = typer.Argument(..., help="Pool names."), yes: bool = opt.Yes, *, store_opts: opt.StoreOptions
) -> None:
    """Remove pools: their documents and contributions (one transaction)."""
    drop_named("pool", names, yes, store_opts)

"""Subsample commands: `evalstore subsample --qrels NAME --fractions ...` and its sub-commands
(list, show, export, drop). Each calls a method of the store (:class:`evalstore.Store`: the functions of
:mod:`evalstore.subsample`)."""

from __future__ import annotations

import typer

from ..evaluation.default_qrels import HELP as default_qrels_help
from ..evaluation.default_qrels import default_qrels
from ..output.table import Table
from . import options as opt
from . import ranges
from .app import CONTEXT, app, open_store
from .choices import flag
from .help_format import HelpGroup
from .output import OutputFile, UsageProblem, check_can_ask, confirmed, emit, format_option, output_format, say
from .ranges import number

subsample_app = typer.Typer(
    cls=HelpGroup,
    help="Create reproducible judgment subsamples (Buckley & Voorhees reduced qrels) and list, show, export or "
    "drop them.\n\nCreate: evalstore subsample [--qrels NAME] --fractions 0.9,0.7,0.5,0.3,0.1 [--subsample-trials K] "
    "[--subsample-seed S] [--min-rel 1] [--min-nonrel 10]. Names are <qrels>@bv<fraction>#<trial>.",
    invoke_without_command=True,
    context_settings=CONTEXT,
)
app.add_typer(subsample_app, name="subsample")


@subsample_app.callback()
@opt.shared(store_opts=opt.STORE)
def create(
    ctx: typer.Context,
    qrels: str | None = typer.Option(None, "--qrels", "-q", help=f"The qrels set to subsample ({default_qrels_help})."),
    fractions: str | None = typer.Option(
        None,
        "--fractions",
        help="Fractions kept, e.g. 0.9,0.7,0.5,0.3,0.1 (or 50%), or a preset: "
        "'bompada' (0.01-0.05, 0.1-0.9: 14 values), 'sakai' (0.9,0.7,0.5,0.3,0.1).",
    ),
    trials: int = opt.SubsampleTrials,
    seed: int = opt.SubsampleSeed,
    old_trials: int | None = number(  # before 0.x: deprecated spellings
        None, "--trials", range=ranges.SUBSAMPLE_TRIALS, hidden=True, help="Deprecated: --subsample-trials."
    ),
    old_seed: int | None = number(None, "--seed", range=ranges.SEED, hidden=True, help="Deprecated: --subsample-seed."),
    min_rel: int = number(1, "--min-rel", range=ranges.COUNT, help="Keep at least this many relevant docs per topic."),
    min_nonrel: int = number(
        10, "--min-nonrel", range=ranges.COUNT, help="Keep at least this many nonrelevant docs per topic."
    ),
    method: str = typer.Option("buckley_voorhees", "--method", help="Subsampling method (buckley_voorhees)."),
    prefix: str | None = typer.Option(None, "--prefix", help="Name prefix (default: the qrels name)."),
    replace: bool = flag("--replace", help="Recreate same-named subsamples made differently."),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
):
    """Create subsamples of a qrels set, or run a sub-command (list, show, export, drop)."""
    fmt = output_format(fmt, output)
    ctx.obj = {"db": store_opts.db}  # `subsample --db X list` works like `subsample list --db X`
    if ctx.invoked_subcommand is not None:
        if qrels or fractions:
            raise typer.BadParameter(
                f"--qrels/--fractions create subsamples; they do not go with `subsample {ctx.invoked_subcommand}`"
            )
        return
    if not fractions:
        if not qrels:
            typer.echo(ctx.get_help())
            raise typer.Exit(0)
        raise UsageProblem("creating subsamples needs --fractions LIST (e.g. --fractions 0.9,0.7,0.5)")
    if old_trials is not None or old_seed is not None:
        say("note: --trials and --seed of `subsample` are now --subsample-trials (-k) and --subsample-seed")
        trials = trials if old_trials is None else old_trials
        seed = seed if old_seed is None else old_seed
    with open_store(store_opts.in_group(ctx)) as store:
        qrels = qrels or default_qrels(store)
        names = store.create_subsamples(
            qrels,
            fractions,
            trials=trials,
            seed=seed,
            min_rel=min_rel,
            min_nonrel=min_nonrel,
            method=method,
            prefix=prefix,
            replace=replace,
        )
        res = store.list_subsamples(qrels)
        idx = res.columns.index("name")
        rows = [r[:-1] for r in res.rows if r[idx] in set(names)]
        emit(Table(res.columns[:-1], rows, title=f"subsamples of {qrels}"), fmt, output)
    say(f"{len(names)} subsample(s) of {qrels!r} ready")


@subsample_app.command("list")
@opt.shared(store_opts=opt.STORE)
def list_cmd(
    ctx: typer.Context,
    parent: str | None = typer.Option(None, "--qrels", "-q", help="Only the subsamples of this qrels set."),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
):
    """List subsamples with their derivation and sizes (the `subsamples` relation)."""
    fmt = output_format(fmt, output)
    with open_store(store_opts.in_group(ctx)) as store:
        res = store.list_subsamples(parent)
        emit(Table(res.columns, res.rows, title="subsamples"), fmt, output)


@subsample_app.command("show")
@opt.shared(store_opts=opt.STORE)
def show_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Subsample name, e.g. 'dl19@bv0.5#0'."),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    *,
    store_opts: opt.StoreOptions,
):
    """Per-topic sizes of a subsample next to its parent's."""
    fmt = output_format(fmt, output)
    with open_store(store_opts.in_group(ctx)) as store:
        res = store.subsample_sizes(name)
        emit(Table(res.columns, res.rows, title=name), fmt, output)


@subsample_app.command("export")
@opt.shared(store_opts=opt.STORE)
def export_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Subsample (or any qrels set) to write."),
    output: str = typer.Option(..., "--output", "-o", help="Qrels file to write, or - for stdout."),
    *,
    store_opts: opt.StoreOptions,
):
    """Write a subsample as a TREC qrels file (topic 0 docno grade; no comments or blank lines)."""
    with open_store(store_opts.in_group(ctx)) as store:
        n = store.export_qrels(name, output)
    if output != "-":
        say(f"wrote {n} judgments of {name!r} to {output}")


@subsample_app.command("drop")
@opt.shared(store_opts=opt.STORE)
def drop_cmd(
    ctx: typer.Context,
    names: list[str] | None = typer.Argument(None, help="Subsample names."),
    parent: str | None = typer.Option(None, "--qrels", "-q", help="Drop every subsample of this qrels set."),
    yes: bool = opt.Yes,
    *,
    store_opts: opt.StoreOptions,
):
    """Delete subsamples with everything that depends on them, as `drop qrels` does: judgments, scores,
    intervals and the stored analyses that read them (asks first, unless --yes)."""
    if not names and not parent:
        raise typer.BadParameter("give subsample names or --qrels NAME (all its subsamples)")
    check_can_ask(yes, "drop them")
    with open_store(store_opts.in_group(ctx)) as store:
        todo = list(dict.fromkeys(list(names or []) + (store.subsample_names(parent) if parent else [])))
        plan = store.plan_drop_subsamples(todo)
        if plan is None:
            say(f"{parent!r} has no subsamples: nothing to drop")
            return
        if not confirmed(yes, f"drop {plan.summary()}?"):
            raise typer.Exit(1)
        store.drop(plan)  # as `drop qrels`: the scores, intervals and analyses that read them go too
    say(f"dropped {plan.summary()}")

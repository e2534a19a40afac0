"""Typer options shared by the commands, declared once (one spelling and one short flag each).

Single options are :class:`typer.Option` objects used as defaults. Groups of options that several
commands take together (the store, the evaluation options, run selection and output of the
meta-evaluation) are :class:`Group`\\ s: :func:`shared` adds a group's options to a command's
signature and hands the command one typed object (a dataclass) holding their values::

    @app.command("eval")
    @shared(ev=EVALUATION, store=STORE)
    def eval_cmd(qrels: str = Qrels, *, ev: EvaluationOptions, store: StoreOptions) -> None: ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import typer

from ..db.run_kinds import KINDS
from ..errors import MetricError
from ..evaluation import default_qrels
from ..intervals.means import DEFAULT_LEVEL, DEFAULT_TRIALS, METHODS
from ..intervals.ranks import RANK_METHODS
from ..intervals.request import NO_INTERVALS, IntervalRequest
from ..metrics.options import CONVENTIONS, DEFAULTS, EvalOptions
from ..metrics.user.files import register_files
from ..results.across import AGGREGATES as ACROSS_AGGREGATES
from . import figures, ranges, resource_options
from .choices import choice, flag
from .output import OutputFile, format_option, output_format
from .ranges import number

F = TypeVar("F", bound=Callable[..., Any])

Db = typer.Option(
    None,
    "--db",
    envvar="EVALSTORE_DB",
    help="Store file or SQLAlchemy URL (default ./evalstore.duckdb, or $EVALSTORE_DB).",
)

# --------------------------------------------------------------------------- choices
Convention = choice(
    DEFAULTS.convention,
    "--convention",
    choices=CONVENTIONS,
    help="trec_eval (score order), trec_eval9 (scores in single precision, as trec_eval <= 9.0.8 and NIST's "
    "official scores of those years), ntcireval (file order, R=0 topics dropped, depth 1000) or ir_measures "
    "(each metric as ir_measures' provider computes it).",
)
MISSING = ("error", "zero", "drop-topics", "drop-runs")
Missing = choice(
    "error",
    "--missing",
    choices=MISSING,
    help="Runs missing topics: error, zero (trec_eval -c), drop-topics or drop-runs.",
)


# --------------------------------------------------------------------------- what to evaluate
Qrels = typer.Option(..., "--qrels", "-q", help="Name of the qrels set (see `evalstore list qrels`).")
QrelsDefault = typer.Option(None, "--qrels", "-q", help=f"Qrels set of the store ({default_qrels.HELP}).")
QrelsColumns = typer.Option(
    None, "--qrels", "-q", help=f"Qrels set (or subsample); repeat for several columns ({default_qrels.HELP})."
)
Runs = typer.Option(None, "--run", "-r", help="Run name; repeat for several (default: all runs).")
Kinds = choice(
    None,
    "--kind",
    choices=KINDS,
    help="Instead of -r: every run of this kind, submitted, fused (evalstore fuse) or scratch (ingest run --kind "
    "scratch); repeat for several (default: every run; a note says which kinds were included).",
)
QrelsAcross = typer.Option(
    None,
    "--qrels",
    "-q",
    help=f"Qrels set of the store ({default_qrels.HELP}); repeat with --agg for one leaderboard over several sets.",
)
Agg = choice(
    None,
    "--agg",
    choices=ACROSS_AGGREGATES,
    help="Rank runs over the qrels sets given (each counted once): mean (the mean of the per-set means) or borda "
    "(MTEB's Borda count: N - rank points on each set).",
)
Metrics = typer.Option(..., "--metric", "-m", help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable.")

# --------------------------------------------------------------------------- resampling
Trials = number(1000, "--trials", "-B", range=ranges.TRIALS, help="Number of resamples B.")
Seed = number(0, "--seed", range=ranges.SEED, help="Random seed (the same seed reproduces the results exactly).")
# subsampling (Buckley & Voorhees reduced qrels): the same spelling in `subsample` and `meta robustness`
SubsampleTrials = number(
    1,
    "--subsample-trials",
    "-k",
    range=ranges.SUBSAMPLE_TRIALS,
    help="Subsamples per fraction: independent shuffles (trials 0..K-1).",
)
SubsampleSeed = number(
    0,
    "--subsample-seed",
    range=ranges.SEED,
    help="Seed of the subsampling (the same seed gives the same subsamples anywhere).",
)
Alpha = number(0.05, "--alpha", range=ranges.ALPHA, help="Significance level.")

Yes = flag("--yes", "-y", help="Do not ask for confirmation.")

# --------------------------------------------------------------------------- output
Plot = figures.plot_option("the analysis' figure")


# --------------------------------------------------------------------------- groups
@dataclass(frozen=True)
class Group:
    """Options that go together: the dataclass that receives them and ``(name, type, option)`` each."""

    cls: Callable[..., Any]  # a dataclass, or a function making the value the command receives
    options: tuple[tuple[str, Any, Any], ...]


def shared(**groups: Group) -> Callable[[F], F]:
    """Add the options of each group to the decorated command; the command's keyword parameter of
    the group's name receives an instance of the group's dataclass."""

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name not in groups]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
            for group in groups.values()
            for name, annotation, option in group.options
        ]

        @functools.wraps(fn)
        def command(**values: Any) -> Any:
            for key, group in groups.items():
                values[key] = group.cls(**{name: values.pop(name) for name, _, _ in group.options})
            return fn(**values)

        params = own + added
        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command  # type: ignore[return-value]

    return decorate


@dataclass(frozen=True)
class StoreOptions:
    db: str | None
    memory_limit: str | None = None
    threads: int | None = None
    temp_dir: str | None = None
    wait: float | None = None

    def in_group(self, ctx: typer.Context) -> StoreOptions:
        """These options with --db defaulting to one given before the sub-command of a group that
        takes options itself (``evalstore subsample --db X list``, ``evalstore pool --db X list``;
        the group's callback keeps it in ``ctx.obj``)."""
        return replace(self, db=self.db or (ctx.obj or {}).get("db"))


MemoryLimit = typer.Option(
    None,
    "--memory-limit",
    envvar="EVALSTORE_MEMORY_LIMIT",
    parser=resource_options.memory_limit,
    help="DuckDB memory limit, e.g. 1.5GB or 50% (default: 128 MB per thread, at least 512 MB, at most a quarter "
    "of the RAM or 4 GB); beyond it DuckDB spills to --temp-dir.",
)
Threads = number(None, "--threads", envvar="EVALSTORE_THREADS", range=ranges.THREADS, help="DuckDB worker threads.")
TempDir = typer.Option(
    None,
    "--temp-dir",
    envvar="EVALSTORE_TEMP_DIR",
    help="Where DuckDB spills data that does not fit in memory ('' never spills: beyond --memory-limit a "
    "command fails with exit 4).",
)
Wait = number(
    None,
    "--wait",
    envvar="EVALSTORE_WAIT",
    range=ranges.WAIT,
    help="Seconds to retry while another process holds the store (default: none, except 30 s for a writer while "
    "`evalstore serve` holds it).",
)

STORE = Group(
    StoreOptions,
    (
        ("db", str | None, Db),
        ("memory_limit", str | None, MemoryLimit),
        ("threads", int | None, Threads),
        ("temp_dir", str | None, TempDir),
        ("wait", float | None, Wait),
    ),
)


#: ``--convention``, ``--complete``, ``--depth``: the command receives them as one
#: :class:`~evalstore.metrics.options.EvalOptions`.
def evaluation_options(
    convention: str, complete: bool, depth: int | None, measures: list[str] | None = None
) -> EvalOptions:
    """The command's :class:`~evalstore.metrics.options.EvalOptions`; ``--measures FILE.sql``: the
    measures of one's own of those files, registered for this command first."""
    if measures:
        register_files(measures)
    return EvalOptions(convention, complete, depth)


EVALUATION = Group(
    evaluation_options,
    (
        ("convention", str, Convention),
        (
            "complete",
            bool,
            flag("--complete", "-c", help="Topics of the qrels missing from a run score 0 (trec_eval -c)."),
        ),
        (
            "depth",
            int | None,
            number(
                None,
                "--depth",
                "-M",
                range=ranges.DEPTH,
                help="Evaluate only the top N documents per topic (trec_eval -M).",
            ),
        ),
        (
            "measures",
            list[str] | None,
            typer.Option(
                None,
                "--measures",
                help="An SQL file of measures of one's own for this command (one measure named after the file, or "
                "several after '-- @measure NAME' lines; docs/measures.md); repeatable. `evalstore measure add` keeps "
                "one in the store.",
            ),
        ),
    ),
)


RankCi = choice(
    None,
    "--rank-ci",
    choices=RANK_METHODS,
    help="Add each run's rank by the first metric with its interval (columns rank, rank_lo, rank_hi; stored, the "
    "leaderboard view's rank_lo/rank_hi): bootstrap (the paired bootstrap over the topics, all runs resampled "
    "together: --trials, --seed) or t (from paired t intervals of the differences, Bonferroni over each run's "
    "comparisons). At --level.",
)
_WITHOUT_CI = "goes with --ci (t or bootstrap) or --rank-ci: add one, or leave it out"


@dataclass(frozen=True)
class IntervalOptions:
    """``--ci``, ``--level``, ``--trials``, ``--seed``: a confidence interval of every mean
    (:mod:`evalstore.intervals.means`), and ``--rank-ci``: each run's rank with its interval
    (:mod:`evalstore.intervals.ranks`), checked before any work."""

    ci: str | None
    given_level: float | None
    given_trials: int | None
    given_seed: int | None
    rank_ci: str | None = None

    def __post_init__(self) -> None:
        if self.ci is None and self.rank_ci is None:  # an interval's options without one: an error, not ignored
            given = {"--level": self.given_level, "--trials": self.given_trials, "--seed": self.given_seed}
            for flag, value in given.items():
                if value is not None:
                    raise typer.BadParameter(_WITHOUT_CI, param_hint=flag)
            return
        level, trials, seed = self._values()
        # each value checked alone, so that the message names the one option at fault
        for option, args in (("--level", (level,)), ("--trials", (level, trials)), ("--seed", (level, trials, seed))):
            try:
                IntervalRequest(self.ci, self.rank_ci, *args)
            except MetricError as e:
                raise typer.BadParameter(str(e), param_hint=option) from None

    def _values(self) -> tuple[float, int, int]:
        """``--level``, ``--trials``, ``--seed`` as given, else the library's defaults."""
        d = NO_INTERVALS
        return (
            d.level if self.given_level is None else self.given_level,
            d.trials if self.given_trials is None else self.given_trials,
            d.seed if self.given_seed is None else self.given_seed,
        )

    @property
    def request(self) -> IntervalRequest:
        """The intervals asked for, as the library takes them."""
        return IntervalRequest(self.ci, self.rank_ci, *self._values())


INTERVALS = Group(
    IntervalOptions,
    (
        (
            "ci",
            str | None,
            choice(
                None,
                "--ci",
                choices=METHODS,
                help="Add a confidence interval of every mean (columns '<metric> lo' and '<metric> hi'; stored "
                "with the scores, the leaderboard view's ci_lo/ci_hi): t (mean -+ t sd/sqrt(n) over the topics) "
                "or bootstrap (percentile interval over --trials resamples of the topics, --seed). Geometric "
                "means on the log scale; sums get none.",
            ),
        ),
        (
            "given_level",
            float | None,
            number(
                None,
                "--level",
                range=ranges.LEVEL,
                help=f"Confidence level of --ci and --rank-ci (default {DEFAULT_LEVEL}).",
            ),
        ),
        (
            "given_trials",
            int | None,
            number(
                None,
                "--trials",
                "-B",
                range=ranges.TRIALS,
                help=f"Resamples B of --ci bootstrap and --rank-ci bootstrap (default {DEFAULT_TRIALS}).",
            ),
        ),
        (
            "given_seed",
            int | None,
            number(None, "--seed", range=ranges.SEED, help="Random seed of the bootstrap (default 0)."),
        ),
        ("rank_ci", str | None, RankCi),
    ),
)


def check_kinds(run: list[str] | None, kind: list[str] | None, elsewhere: object = False) -> None:
    """``--kind`` chooses stored runs instead of ``-r``: not both, and not where no stored runs are
    chosen (``elsewhere``: files, several qrels sets, subsamples, Spark)."""
    if kind and run:
        raise typer.BadParameter("name the runs (-r) or give their kind, not both", param_hint="--kind")
    if kind and elsewhere:
        raise typer.BadParameter(
            "--kind chooses the stored runs of one evaluation; leave out files, --agg, --subsamples, --engine spark",
            param_hint="--kind",
        )


_RUN_SELECTION = (
    ("run", list[str] | None, Runs),
    ("kind", list[str] | None, Kinds),
    (
        "top",
        int | None,
        number(
            None,
            "--top",
            range=ranges.RUNS,
            help="Keep the N best runs by --top-by (default: the first metric) on the first qrels set.",
        ),
    ),
    ("top_by", str | None, typer.Option(None, "--top-by", help="Metric that selects the --top runs, e.g. AP.")),
    ("missing", str, Missing),
)
_ANALYSIS_OUTPUT = (
    ("fmt", str | None, format_option()),
    ("output", str | None, OutputFile),
    ("plot", str | None, Plot),
    ("plot_data", str | None, figures.PlotData),
    ("no_save", bool, flag("--no-save", help="Do not store the results in the meta_* relations.")),
)


@dataclass(frozen=True)
class AnalysisOptions:
    """What every meta-evaluation command takes: which runs, how to evaluate, where the output goes."""

    run: list[str] | None
    kind: list[str] | None
    top: int | None
    top_by: str | None
    missing: str
    convention: str
    complete: bool
    depth: int | None
    fmt: str | None
    output: str | None
    plot: str | None
    plot_data: str | None
    no_save: bool
    db: str | None
    memory_limit: str | None = None
    threads: int | None = None
    temp_dir: str | None = None
    wait: float | None = None
    measures: list[str] | None = None  # --measures FILE.sql (see evaluation_options)

    def inputs(self) -> dict[str, Any]:
        """The keyword arguments of the :mod:`evalstore.meta` analyses that select and evaluate."""
        return {
            "runs": self.run or None,
            **({"kinds": self.kind} if self.kind else {}),
            "top": self.top,
            "top_by": self.top_by,
            "missing": self.missing,
            "options": EvalOptions(self.convention, self.complete, self.depth),
        }

    def __post_init__(self) -> None:
        if self.measures:
            register_files(self.measures)
        # the output format and file are checked before the analysis runs
        object.__setattr__(self, "fmt", output_format(self.fmt, self.output))
        figures.check(self.plot, self.plot_data)

    @property
    def paper(self) -> bool:
        """Paper-style tables on a terminal; plain values for csv/tsv/json and files."""
        return self.fmt == "table" and not self.output


ANALYSIS = Group(AnalysisOptions, _RUN_SELECTION + EVALUATION.options + _ANALYSIS_OUTPUT + STORE.options)

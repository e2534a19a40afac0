"""Store commands: ingest, list, sql, db status/upgrade, metrics."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import typer

from ..base.output_file import replacing
from ..db import QueryResult, inspect_store
from ..db.check import check_store
from ..db.connection import STORAGE_VERSION
from ..db.run_kinds import KINDS as RUN_KINDS
from ..errors import StoreError
from ..ingest import INPUT_FORMATS, IngestResult
from ..ingest.text_formats import FORMAT_CHOICES, TEXT_FORMATS, TOPIC_FIELDS
from ..metrics import describe
from ..output.table import Table
from . import failures
from . import options as opt
from .app import app, group, open_for_queries, open_for_reading, open_store
from .choices import flag
from .inputs import text_or_stdin
from .output import OutputFile, check_can_ask, confirmed, emit, format_option, output_format, say

ingest_app = group(
    "Ingest runs and qrels (TREC or NTCIR formats), topics and documents, generated answers with their nuggets, "
    "nugget assignments and support labels; .gz read transparently."
)
db_app = group("Store administration: schema version and upgrades.")
list_app = group("Summarise what is stored.")
app.add_typer(ingest_app, name="ingest")
app.add_typer(db_app, name="db")
app.add_typer(list_app, name="list")
drop_app = group(
    "Remove runs, qrels sets, topic, doc or nugget sets and everything that depends on them (scores, subsamples, "
    "analyses)."
)
app.add_typer(drop_app, name="drop")


def input_format_option(kind: str) -> Any:
    """``--format`` of ``ingest run`` / ``ingest qrels``: the input formats registered for that kind
    of file (:data:`evalstore.ingest.INPUT_FORMATS`), with their descriptions as help."""
    formats = [f for f in INPUT_FORMATS.values() if kind == "qrels" or f.runs]
    return opt.choice(
        "trec",
        "--format",
        "-f",
        choices=[f.name for f in formats],
        help="Input format: " + "; ".join(f"{f.name}: {f.description}" for f in formats) + ".",
    )


def text_format_option(kind: str) -> Any:
    """``--format`` of ``ingest topics`` / ``ingest docs`` (:data:`evalstore.ingest.text_formats.TEXT_FORMATS`)."""
    names = FORMAT_CHOICES[kind]
    described = "; ".join(f"{n}: {TEXT_FORMATS[n].description}" for n in names if n in TEXT_FORMATS)
    return opt.choice(
        "auto", "--format", "-f", choices=names, help=f"Input format (auto: from the first character): {described}."
    )


def _summaries(results: list[IngestResult]) -> None:
    for r in results:  # the summary line and a line per note, each escaped (a name never breaks a line)
        say([replace(r, messages=[]).summary(), *(f"  note: {m}" for m in r.messages)])


def _table(res: QueryResult, title: str | None = None, digits: int | None = 4) -> Table:
    return Table(res.columns, res.rows, title=title, digits=digits)


@ingest_app.command("run")
@opt.shared(store_opts=opt.STORE)
def ingest_run(
    files: list[str] = typer.Argument(
        ..., help="Run files or globs (quote globs to pass them through); .gz files are read transparently."
    ),
    name: str | None = typer.Option(None, "--name", "-n", help="Run name (default: the run tag)."),
    fmt: str = input_format_option("run"),
    name_from: str = opt.choice(
        "tag", "--name-from", choices=("tag", "file"), help="Name runs by their 'tag' or by 'file' name."
    ),
    replace: bool = flag(
        "--replace", help="Replace a stored run of the same name (atomically; its stored scores are dropped)."
    ),
    dedupe: bool = flag(
        "--dedupe", help="Keep the first of duplicate docs in a topic (default: a duplicate is an error)."
    ),
    kind: str | None = opt.choice(
        None,
        "--kind",
        choices=RUN_KINDS,
        help="What the runs are: submitted (a new run's default), scratch (an experiment of one's own, which "
        "--kind submitted leaves out of leaderboards) or fused; set on runs already stored too.",
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest TREC runs (topic Q0 doc rank score tag) or NTCIR res files (one docno per line).

    All files of the call are stored in one transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        results = store.ingest_run(
            files, name=name, format=fmt, replace=replace, dedupe=dedupe, name_from=name_from, kind=kind
        )
    _summaries(results)


@ingest_app.command("qrels")
@opt.shared(store_opts=opt.STORE)
def ingest_qrels(
    files: list[str] = typer.Argument(..., help="Qrels files or globs; .gz read transparently."),
    name: str | None = typer.Option(
        None, "--name", "-n", help="Set name (default: file name); several files form one set."
    ),
    fmt: str = input_format_option("qrels"),
    gains: str | None = typer.Option(None, "--gains", help="Declared default gains of levels 1..n, e.g. 1:2:3."),
    intent_probs: str | None = typer.Option(
        None,
        "--intent-probs",
        help="Intent probabilities (topic intent prob lines) for --format subtopic or ntcir-intents; "
        "default: uniform over a topic's subtopics.",
    ),
    replace: bool = flag(
        "--replace", help="Replace a stored set of the same name (atomically; its stored scores are dropped)."
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest TREC qrels (topic iter doc grade) or NTCIR qrels (topic doc L<n>, or per-topic doc L<n>),
    or diversity judgments per subtopic (--format subtopic / ntcir-intents).

    All files of the call are stored in one transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        results = store.ingest_qrels(
            files, name=name, format=fmt, replace=replace, gains=gains, intent_probs=intent_probs
        )
    _summaries(results)


@ingest_app.command("topics")
@opt.shared(store_opts=opt.STORE)
def ingest_topics_cmd(
    file: str = typer.Argument(..., help="Topic file (- for standard input); .gz read transparently."),
    name: str | None = typer.Option(
        None,
        "--name",
        "-n",
        help="Topic set name (default: the file name, after its folder too if generic: dl/topics.tsv: dl-topics).",
    ),
    fmt: str = text_format_option("topics"),
    field: str = opt.choice(
        "title",
        "--field",
        choices=TOPIC_FIELDS,
        help="The topic field shown as the query: title, description, narrative.",
    ),
    replace: bool = flag("--replace", help="Replace a stored topic set of the same name (atomically)."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest topics (queries): TREC topic files (<top><num>..<title>..</top> or <topic number=..><query>..),
    MS MARCO-style qid<TAB>text, or JSONL as ir_datasets and BEIR write it.

    Pages show a topic's query; SQL reads the view topics. One transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_topics(file, name=name, format=fmt, field=field, replace=replace)
    say(result.summary())


@ingest_app.command("dataset")
@opt.shared(store_opts=opt.STORE)
def ingest_dataset_cmd(
    dataset: str = typer.Argument(..., help="An ir_datasets id, e.g. msmarco-passage/trec-dl-2019/judged."),
    name: str | None = typer.Option(
        None, "--name", "-n", help="Name of the qrels set and the topic set (default: the dataset id)."
    ),
    replace: bool = flag("--replace", help="Replace a stored qrels set or topic set of the same name (atomically)."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest an ir_datasets dataset: its qrels (with the relevance definitions of its grades), its queries as a
    topic set and its official measures, which `eval -q NAME` evaluates when no -m is given.

    Needs the ir-datasets extra; ir_datasets downloads qrels and queries it does not have yet (documents are not
    read). One transaction: on any error nothing is stored."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_dataset(dataset, name=name, replace=replace)
    say(result.summary())


@ingest_app.command("docs")
@opt.shared(store_opts=opt.STORE)
def ingest_docs_cmd(
    file: str = typer.Argument(..., help="Document file (- for standard input); .gz read transparently."),
    name: str | None = typer.Option(
        None,
        "--name",
        "-n",
        help="Doc set name (default: the file name, after its folder too if generic: ms/docs.tsv: ms-docs).",
    ),
    fmt: str = text_format_option("docs"),
    replace: bool = flag("--replace", help="Replace a stored doc set of the same name (atomically)."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Ingest document texts (optional): docid<TAB>text (MS MARCO collection.tsv) or JSONL; the text is kept as
    given, read in bounded chunks.

    Topic pages then show a snippet of each ranked document; SQL reads the view docs. One transaction."""
    with open_store(store_opts, create=True) as store:
        result = store.ingest_docs(file, name=name, format=fmt, replace=replace)
    say(result.summary())


#: the list commands: what each lists, the Store method that lists it, its title, its help
LISTED = (
    ("runs", "list_runs", "runs", "List stored runs."),
    ("qrels", "list_qrels", "qrels sets", "List stored qrels sets."),
    (
        "topics",
        "list_topics",
        "topic sets",
        "List stored topic sets (evalstore ingest topics), with the judged topics of each qrels set they hold.",
    ),
    ("docs", "list_docs", "doc sets", "List stored doc sets (evalstore ingest docs)."),
)


def _list_command(what: str, method: str, title: str, doc: str) -> None:
    """The command ``evalstore list WHAT``: the Store method's table in any format."""

    @list_app.command(what, help=doc)
    @opt.shared(store_opts=opt.STORE)
    def listed(
        fmt: str | None = format_option(), output: str | None = OutputFile, *, store_opts: opt.StoreOptions
    ) -> None:
        fmt = output_format(fmt, output)
        with open_for_reading(store_opts) as store:
            res = getattr(store, method)()
        emit(_table(res, title, digits=6), fmt, output)


for _entry in LISTED:
    _list_command(*_entry)


@drop_app.command("run")
@opt.shared(store_opts=opt.STORE)
def drop_run(
    names: list[str] = typer.Argument(..., help="Run names."), yes: bool = opt.Yes, *, store_opts: opt.StoreOptions
) -> None:
    """Remove runs: their rows, stored scores and the meta analyses that read them (one transaction)."""
    drop_named("run", names, yes, store_opts)


@drop_app.command("qrels")
@opt.shared(store_opts=opt.STORE)
def drop_qrels(
    names: list[str] = typer.Argument(..., help="Qrels set names."),
    yes: bool = opt.Yes,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Remove qrels sets: their judgments, stored scores, the subsamples drawn from them and the
    meta analyses that read them (one transaction)."""
    drop_named("qrels", names, yes, store_opts)


@drop_app.command("topics")
@opt.shared(store_opts=opt.STORE)
def drop_topics(
    names: list[str] = typer.Argument(..., help="Topic set names."),
    yes: bool = opt.Yes,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Remove topic sets with their texts (one transaction)."""
    drop_named("topics", names, yes, store_opts)


@drop_app.command("docs")
@opt.shared(store_opts=opt.STORE)
def drop_docs(
    names: list[str] = typer.Argument(..., help="Doc set names."),
    yes: bool = opt.Yes,
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Remove doc sets with their texts (one transaction)."""
    drop_named("docs", names, yes, store_opts)


def drop_named(kind: str, names: list[str], yes: bool, store_opts: opt.StoreOptions) -> None:
    check_can_ask(yes, "drop them" if len(names) > 1 else "drop it")
    with open_store(store_opts) as store:
        plan = store.plan_drop(kind, names)
        if not confirmed(yes, f"drop {plan.summary()}?"):
            raise typer.Exit(1)
        store.drop(plan)
    say(f"dropped {plan.summary()}")


@app.command("sql")
@opt.shared(store_opts=opt.STORE)
def sql(
    query: str = typer.Argument(
        ...,
        help="SQL query (DuckDB dialect) over runs, qrels_sets, run_rows, qrels, scores, leaderboard, ...; - reads it "
        "from standard input.",
    ),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    write: bool = flag("--write", help="Allow statements that change the store or write files."),
    sandbox: bool = flag(
        "--sandbox",
        help="For untrusted queries: also no file at all (not even spilling) and none of evalstore's Python "
        "functions over lists (what the web's SQL page runs).",
    ),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Run ad-hoc SQL against the store (read-only unless --write; --sandbox for untrusted queries);
    results go to stdout or to -o FILE. Read-only changes nothing, and DuckDB itself sees to it: the
    store is opened read-only, without access to files or the network and with its settings locked,
    so no statement writes the store, a setting or a file (COPY is refused: write results with
    -o FILE.csv/.parquet/...); nor does it read a file other than the store.

    csv/tsv/json are exact (floats printed to full precision) and a table is plain text when
    stdout is not a terminal, so the output pipes cleanly."""
    fmt = output_format(fmt, output)
    if sandbox and write:
        raise typer.BadParameter("--sandbox is read-only; leave out --write", param_hint="--sandbox")
    query = text_or_stdin(query, "QUERY")
    if write:
        with open_store(store_opts) as store:
            res = store.sql(query, write=True)
    else:
        with open_for_queries(store_opts, sandbox=sandbox) as store:
            res = store.sql(query, sandbox=sandbox)
    if res.columns:
        # values as computed: no rounding, integers as integers; column names as the query wrote them
        emit(Table([_as_written(c) for c in res.columns], res.rows, digits=None), fmt, output)
    else:
        say("ok (the statement returned no rows)")


def _as_written(column: str) -> str:
    """A result column's name closer to how the query wrote it: DuckDB names an unaliased
    ``count(*)`` ``count_star()`` and quotes the identifiers inside expressions (``avg("value")``)."""
    column = column.replace("count_star()", "count(*)")
    return re.sub(r'"([A-Za-z_][A-Za-z0-9_]*)"', r"\1", column) if "(" in column else column


@db_app.command("status")
@opt.shared(store_opts=opt.STORE)
def db_status(
    fmt: str = opt.choice("table", "--format", "-f", choices=("table", "json"), help="table or json."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Show the store's schema version and the migrations applied (does not upgrade the store)."""
    st = inspect_store(store_opts.db)
    if fmt == "json":
        typer.echo(json.dumps(st, indent=1))
        return
    typer.echo(f"store:           {st['location']}")
    if st["state"] == "missing":
        typer.echo("state:           does not exist (it is created by the first ingest)")
        return
    typer.echo(f"schema version:  {st['schema_version']} (this evalstore knows up to {st['code_schema_version']})")
    if st["state"] == "older":
        typer.echo(
            "state:           needs an upgrade: run `evalstore db upgrade` (any command that writes upgrades it too)"
        )
    elif st["state"] == "newer":
        typer.echo("state:           written by a newer evalstore; upgrade evalstore to use it")
    else:
        typer.echo("state:           up to date")
    if st.get("storage_version"):
        typer.echo(
            f"storage format:  DuckDB's file format tagged {st['storage_version']}, written for DuckDB "
            f"{STORAGE_VERSION.lstrip('v')} (the duckdb CLI and packages from {STORAGE_VERSION.lstrip('v')[:3]} on "
            f"read the store; 1.0 does not)"
        )
    if st["n_runs"] is not None:
        typer.echo(f"runs: {st['n_runs']}   qrels sets: {st['n_qrels']}")
    emit(Table(["version", "name", "applied_at"], [(a["version"], a["name"], a["applied_at"]) for a in st["applied"]]))


@db_app.command("check")
@opt.shared(store_opts=opt.STORE)
def db_check(*, store_opts: opt.StoreOptions) -> None:
    """Read every table and every index of the store file in full and report damage (exit 6 when
    damaged). Nothing is written: the index probe runs in a transaction that is rolled back."""
    report = check_store(store_opts.db)
    if report.error:
        say(f"error: {report.error}")
        raise typer.Exit(failures.DAMAGED)
    rows = [(t, n, "ok" if err is None else f"DAMAGED: {err}") for t, n, err in report.tables]
    rows += [(f"index {i}", None, "ok" if err is None else f"DAMAGED: {err}") for i, err in report.indexes]
    emit(Table(["table", "rows", "state"], rows, title=f"check of {report.location}"))
    bad = [t for t, _, err in report.tables if err] + [f"index {i}" for i, err in report.indexes if err]
    if bad:
        say(
            f"error: the store file is damaged: {len(bad)} table(s) or index(es) cannot be read ({', '.join(bad)}); "
            f'restore it from a copy, or export what is readable (evalstore sql "SELECT ..." -o file.csv)'
        )
        raise typer.Exit(failures.DAMAGED)
    if report.indexes_skipped:
        say(f"note: indexes not checked: {report.indexes_skipped}")
    say(
        f"ok: {len(report.tables)} tables and {len(report.indexes)} indexes read in full, no damage found"
        if report.indexes
        else f"ok: {len(report.tables)} tables read in full, no damage found"
    )


@db_app.command("upgrade")
@opt.shared(store_opts=opt.STORE)
def db_upgrade(*, store_opts: opt.StoreOptions) -> None:
    """Apply the pending schema migrations (each in its own transaction)."""
    before = inspect_store(store_opts.db)
    if before["state"] == "missing":
        raise StoreError(f"the store {before['location']} does not exist; nothing to upgrade")
    with open_store(store_opts) as store:
        after = store.schema_version()
    if after == before["schema_version"]:
        say(f"schema version {after}: already up to date")
    else:
        say(f"upgraded {before['location']} from schema version {before['schema_version']} to {after}")


@app.command("metrics")
def metrics(
    name: str | None = typer.Argument(None, help="Show one metric in full; any spelling (nDCG@10, ndcg_cut_10)."),
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
) -> None:
    """List the metrics (name, what it measures, aliases, parameters), or show one in full."""
    fmt = output_format(fmt, output)
    entries = describe(name)
    if name:
        e = entries[0]
        if fmt == "json":  # the entry itself, nested as it is
            text = json.dumps(e, indent=1) + "\n"
            if output:
                with replacing(output) as fh:
                    fh.write(text)
                say(f"wrote {output}")
            else:
                typer.echo(text, nl=False)
            return
        rows = [
            ("name", e["name"]),
            ("measures", e["doc"]),
            ("aliases", ", ".join(e["aliases"])),
            ("parameters", "; ".join(f"{p['name']}={p['default']} ({p['doc']})" for p in e["params"])),
            ("cutoff @k", e["cutoff"]),
            ("summary over topics", e["aggregate"]),
            ("source", e["citation"]),
            ("agrees with", e["reference"]),
            ("ir_measures provider", e["ir_measures"]),
            ("SQL", e["sql"]),
            ("reads", ", ".join(e["reads"])),
            ("Spark backend", e["spark"]),
            ("evalstore explain", e["explain"]),
        ]
        emit(Table(["field", "value"], rows, title=e["name"], digits=None), fmt, output)
        return
    listing: list[tuple[str, str, str, str]] = [
        (
            e["name"],
            _first_sentence(e["doc"]),
            ", ".join(e["aliases"]),
            ", ".join(f"{p['name']}={p['default']}" for p in e["params"]) + (" @k" if e["cutoff"] != "none" else ""),
        )
        for e in entries
    ]
    emit(Table(["metric", "measures", "aliases", "parameters"], listing, title="metrics", digits=None), fmt, output)


def _first_sentence(text: str) -> str:
    """The first sentence: up to a full stop before a capital letter ("Eq. 10" does not end one)."""
    first = re.split(r"\.\s+(?=[A-Z])", text.strip(), maxsplit=1)[0].rstrip(".")
    return first if len(first) <= 90 else first[:87] + "..."

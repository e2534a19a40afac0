"""`evalstore export store DIR` and `evalstore import store DIR`: the Parquet layout of a store
(:mod:`evalstore.layout`)."""

from __future__ import annotations

import typer

from . import options as opt
from .app import app, group, open_for_reading, open_store
from .eval_cmds import export_app
from .output import say

import_app = group("Import a store's Parquet layout (written by `evalstore export store` or by other tools).")
app.add_typer(import_app, name="import")


@export_app.command("store")
@opt.shared(store_opts=opt.STORE)
def export_store_cmd(
    folder: str = typer.Argument(..., help="A new (or empty) folder for the Parquet layout."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Write runs (partitioned by run), qrels sets, subsamples, scores and a manifest as Parquet files
    (docs/scale.md describes the layout)."""
    with open_for_reading(store_opts) as store:
        manifest = store.export_layout(folder)
    say(f"wrote {folder}: {len(manifest['runs'])} runs, {len(manifest['qrels'])} qrels sets (manifest.json)")


@import_app.command("store")
@opt.shared(store_opts=opt.STORE)
def import_store_cmd(
    folder: str = typer.Argument(..., help="A folder in evalstore's Parquet layout."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Read a Parquet layout into the store (in one transaction; names already in the store are refused)."""
    with open_store(store_opts, create=True) as store:
        added = store.import_layout(folder)
    say(f"imported {added['runs']} runs and {added['qrels']} qrels sets from {folder}")


@import_app.command("scores")
@opt.shared(store_opts=opt.STORE)
def import_scores_cmd(
    folder: str = typer.Argument(..., help="The layout folder whose spark_scores/ to store."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Store the per-topic scores that `evalstore eval --engine spark` wrote under DIR/spark_scores/."""
    with open_store(store_opts) as store:
        n = store.import_scores(folder)
    say(f"imported {n} evaluations (run, qrels, metric) from {folder}/spark_scores")

"""The Parquet layout of a store: a folder other tools (Spark, pandas, polars, another evalstore)
can read and write without DuckDB, and that carries everything a store holds.

::

    DIR/manifest.json              layout version, schema and engine version, what the folder holds
                                   (runs, qrels, topic and doc sets with their counts; every file
                                   with its rows and sha256: :mod:`.manifest`)
    DIR/runs/run=<name>/*.parquet  topic, doc, rank, line_no, submitted_rank, score (one partition per run)
    DIR/qrels/qrels=<name>/*.parquet  topic, doc, grade (one partition per qrels set)
    DIR/run_meta.parquet           name, tag, source, format, sha256, n_topics, n_rows, ...
    DIR/qrels_meta.parquet         name, source, format, sha256, n_topics, n_judged, max_grade, ...
    DIR/subsamples.parquet         qrels, parent, method, fraction, seed, trial, min_rel, min_nonrel, created_at
    DIR/evaluations.parquet        run, qrels, metric, aggregate, n_topics, engine_version, params, ...
    DIR/scores.parquet             run, qrels, metric, topic, value
    DIR/tables/<table>.parquet     every other table: fusion recipes and inputs, topic and doc sets
                                   and their texts, intervals, rank intervals, diversity judgments,
                                   and the stored analyses (meta_runs and the meta_* tables)

Everything is keyed by names, never by the store's integer ids (:mod:`.tables`). ``rank`` is the
evaluation rank (trec_eval's order: score descending, ties by docno descending); a tool writing
runs straight into the layout computes it so, or leaves it to ``evalstore import store``, which
fills a missing rank in that order.

:func:`export_store` writes the folder under a temporary name beside it and renames it when it is
complete (a killed export leaves no half-written folder in the way of the next). :func:`import_store`
checks the manifest first (a version 2 folder must hold exactly the files listed, byte for byte),
refuses names the store already has, reads everything in one transaction, and refuses (storing
nothing) when the rows of a run, qrels set, topic set or doc set do not add up to the manifest's
counts: a layout missing its ``qrels/`` or a run's partition is an error, not a store with scores
for data that is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..evaluation.context import EvaluationContext
from ..version import __version__
from . import manifest as manifests
from .tables import ANALYSES, ANALYSIS_ID, PARTITIONED, carried_tables, export_query, file_of, import_query

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

LAYOUT_VERSION = manifests.VERSION
MANIFEST = manifests.MANIFEST


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


#: The longest folder name most file systems allow (bytes).
MAX_FOLDER_NAME = 255


def partition_folder(key: str, name: str) -> str:
    """The folder DuckDB writes a partition ``key=name`` to: characters other than letters,
    digits, ``.``, ``_``, ``-`` and ``~`` percent-encoded, byte by byte of their UTF-8 form."""
    safe = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~")
    return key + "=" + "".join(c if c in safe else "".join(f"%{b:02X}" for b in c.encode()) for c in name)


def _check_folder_names(store: StoreHandle) -> None:
    """Refuse, before anything is written, names whose partition folder is too long to create."""
    for key, table in (("run", "run_meta"), ("qrels", "qrels_meta")):
        for (name,) in store.con.execute(f"SELECT name FROM {table} ORDER BY name").fetchall():
            folder = partition_folder(key, name)
            if len(folder.encode()) > MAX_FOLDER_NAME:
                raise StoreError(
                    f"the {key} name {name[:40]!r}... makes a layout folder of {len(folder.encode())} bytes (at most "
                    f"{MAX_FOLDER_NAME}); rename it before exporting (nothing was written)"
                )


def export_store(store: StoreHandle, folder: str | os.PathLike) -> dict[str, Any]:
    """Write everything the store holds to ``folder`` (see the module docstring); returns the
    manifest. The folder must be empty or absent; it appears complete or not at all."""
    out = Path(folder)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise StoreError(f"{out} is not empty; export into a new folder")
    _check_folder_names(store)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.export-", dir=out.parent))
    try:
        _write_tables(store, tmp)
        manifest = manifests.build(store.con, tmp, store.schema_version(), __version__)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _write_tables(store: StoreHandle, out: Path) -> None:
    con = store.con
    (out / "tables").mkdir()
    for table, columns in carried_tables(con).items():
        query = export_query(table, columns)
        if table in PARTITIONED:
            folder, key = PARTITIONED[table]
            if con.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]:
                con.execute(
                    f"COPY ({query} ORDER BY ALL) TO {_lit(out / folder)} (FORMAT parquet, PARTITION_BY ({key}))"
                )
        else:
            con.execute(f"COPY ({query} ORDER BY ALL) TO {_lit(out / file_of(table))} (FORMAT parquet)")


def import_store(store: StoreHandle, folder: str | os.PathLike) -> dict[str, int]:
    """Read a layout folder into ``store`` in one transaction (see the module docstring); returns
    counts of what was added (runs, qrels sets, topic sets, doc sets, analyses)."""
    src = Path(folder)
    manifest = manifests.read(src)
    if manifest.version >= 2:
        manifests.check_files(src, manifest)
    _check_names(store, src, manifest)
    con = store.con
    tables = carried_tables(con)
    with store.transaction():
        con.execute("CREATE OR REPLACE TEMP TABLE _layout_analyses (old BIGINT, new BIGINT)")
        try:
            for table, columns in tables.items():
                _import_table(con, src, table, columns)
            manifests.check_counts(con, manifest, src)
        finally:
            con.execute("DROP TABLE IF EXISTS _layout_analyses")
    added = {kind: len(manifest.names(kind)) for kind in manifests.ENTRIES}
    added["analyses"] = int(manifest.raw.get("analyses") or 0) if manifest.version >= 2 else 0
    return added


def _check_names(store: StoreHandle, src: Path, manifest: manifests.Manifest) -> None:
    """The names the layout brings are not in the store, and its meta files list the manifest's."""
    con = store.con
    clash = []
    for kind, (table, _) in manifests.ENTRIES.items():
        names = manifest.names(kind)
        clash += [
            r[0] for r in con.execute(f"SELECT name FROM {table} WHERE list_contains(?, name)", [names]).fetchall()
        ]
        path = src / file_of(table)
        if path.exists():
            held = sorted(r[0] for r in con.execute(f"SELECT name FROM read_parquet({_lit(path)})").fetchall())
            if held != sorted(names):
                raise StoreError(
                    f"{path} lists {kind} {held[:5]}..., the manifest {sorted(names)[:5]}...: the files do not belong "
                    f"together; nothing was imported"
                )
        elif names:
            raise StoreError(f"{src} lists {kind} in its manifest but has no {file_of(table)}; nothing was imported")
    if clash:
        raise StoreError(
            f"the store already has {', '.join(map(repr, clash[:10]))}; import into another store or drop them"
        )


#: how a column is read where the layout may leave it out: a run's rank (other tools)
_RANK = "coalesce(s.rank, row_number() OVER (PARTITION BY s.run, s.topic ORDER BY s.score DESC, s.doc DESC))"


def _import_table(con, src: Path, table: str, columns: list[str]) -> None:
    """Insert one table's rows from the layout (a table the layout does not have is left empty:
    a layout written before the table existed)."""
    path = src / file_of(table)
    if table in PARTITIONED:
        if not path.is_dir():
            return
        source = (
            f"read_parquet({_lit(path / '*' / '*.parquet')}, hive_partitioning = true, hive_types_autocast = false)"
        )
    elif path.exists():
        source = f"read_parquet({_lit(path)})"
    else:
        return
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    if table == ANALYSES:
        con.execute(f"INSERT INTO _layout_analyses SELECT {ANALYSIS_ID}, nextval('meta_analysis_id_seq') FROM {source}")
    cols, select = import_query(table, columns, present, source)
    if table == "run_row_data" and "rank" in present:
        select = select.replace('s."rank"', _RANK)
    con.execute(f'INSERT INTO "{table}" ({cols}) {select}')


def _parquet_columns(con: Any, path: Path) -> set[str]:
    return {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet({_lit(path)})").fetchall()}


def import_scores(store: StoreHandle, folder: str | os.PathLike) -> int:
    """Store per-topic scores computed elsewhere (``DIR/spark_scores/<qrels>/*.parquet`` written by
    :func:`evalstore.spark.evaluate`: run, qrels, metric, topic, value, aggregate, params) for runs
    and qrels sets the store has; an earlier evaluation of the same (run, qrels, metric) is
    replaced, by the same writer as an evaluation's (:meth:`EvaluationContext.save_scores`).
    Returns the number of (run, qrels, metric) evaluations stored."""
    src = Path(folder) / "spark_scores"
    if not src.is_dir():
        raise StoreError(f"{Path(folder)} has no spark_scores folder (written by evalstore.spark.evaluate)")
    con = store.con
    parquet = f"read_parquet({_lit(src / '*' / '*.parquet')})"
    unknown = con.execute(
        f"""SELECT DISTINCT s.run, s.qrels FROM {parquet} s
            LEFT JOIN run_meta r ON r.name = s.run LEFT JOIN qrels_meta q ON q.name = s.qrels
            WHERE r.run_id IS NULL OR q.qrels_id IS NULL LIMIT 5"""
    ).fetchall()
    if unknown:
        raise StoreError(
            f"scores for runs or qrels sets the store does not have: {unknown}; import the store first "
            f"(evalstore import store DIR)"
        )
    with store.transaction(), EvaluationContext(con) as ctx:
        ctx.add_scores(
            f"""SELECT q.qrels_id, r.run_id, s.topic, s.metric, s.value, s.aggregate, s.params FROM {parquet} s
                JOIN run_meta r ON r.name = s.run JOIN qrels_meta q ON q.name = s.qrels"""
        )
        return ctx.save_scores(store, pool=False, engine_version=__version__ + "+spark")

"""The Parquet layout of a store: a folder other tools (Spark, pandas, polars, another evalstore)
can read and write without DuckDB.

::

    DIR/manifest.json              layout version, schema and engine version, runs and qrels sets
    DIR/runs/run=<name>/*.parquet  topic, doc, rank, score, line_no, submitted_rank (one partition per run)
    DIR/qrels/qrels=<name>/*.parquet  topic, doc, grade (one partition per qrels set)
    DIR/run_meta.parquet           name, tag, source, format, sha256, n_topics, n_rows, ...
    DIR/qrels_meta.parquet         name, source, format, sha256, n_topics, n_judged, max_grade, ...
    DIR/subsamples.parquet         qrels, parent, method, fraction, seed, trial, min_rel, min_nonrel, created_at
    DIR/evaluations.parquet        run, qrels, metric, aggregate, n_topics, engine_version, params, ...
    DIR/scores.parquet             run, qrels, metric, topic, value

Everything is keyed by names, never by the store's integer ids. ``rank`` is the evaluation rank
(trec_eval's order: score descending, ties by docno descending); a tool writing runs straight into
the layout computes it so, or leaves it to ``evalstore import store``, which fills a missing rank
in that order. :func:`export_store` writes the folder, :func:`import_store` reads it into a store
(refusing names the store already has), in one transaction.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..evaluation.context import EvaluationContext
from ..version import __version__

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

LAYOUT_VERSION = 1
MANIFEST = "manifest.json"


def _columns(store: StoreHandle, table: str, drop: tuple[str, ...] = ()) -> list[str]:
    rows = store.con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]
    ).fetchall()
    return [r[0] for r in rows if r[0] not in drop]


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
    """Write the store's runs, qrels sets, subsamples and scores to ``folder`` (see the module
    docstring); returns the manifest. The folder must be empty or absent."""
    out = Path(folder)
    if out.exists() and any(out.iterdir()):
        raise StoreError(f"{out} is not empty; export into a new folder")
    con = store.con
    _check_folder_names(store)
    out.mkdir(parents=True, exist_ok=True)
    run_cols = ", ".join(f"m.{c}" for c in _columns(store, "run_meta", ("run_id",)))
    qrels_cols = ", ".join(f"m.{c}" for c in _columns(store, "qrels_meta", ("qrels_id",)))
    eval_cols = ", ".join(f"e.{c}" for c in _columns(store, "evaluations", ("run_id", "qrels_id")))
    sub_cols = ", ".join(f"s.{c}" for c in _columns(store, "subsample_meta", ("qrels_id", "parent_id")))
    statements = {
        "run_meta.parquet": f"SELECT {run_cols} FROM run_meta m ORDER BY m.name",
        "qrels_meta.parquet": f"SELECT {qrels_cols} FROM qrels_meta m ORDER BY m.name",
        "subsamples.parquet": f"""SELECT q.name AS qrels, p.name AS parent, {sub_cols} FROM subsample_meta s
            JOIN qrels_meta q ON q.qrels_id = s.qrels_id JOIN qrels_meta p ON p.qrels_id = s.parent_id
            ORDER BY q.name""",
        "evaluations.parquet": f"""SELECT r.name AS run, q.name AS qrels, {eval_cols} FROM evaluations e
            JOIN run_meta r USING (run_id) JOIN qrels_meta q USING (qrels_id) ORDER BY run, qrels, metric""",
        "scores.parquet": """SELECT r.name AS run, q.name AS qrels, s.metric, s.topic, s.value FROM score_data s
            JOIN run_meta r USING (run_id) JOIN qrels_meta q USING (qrels_id) ORDER BY run, qrels, metric, topic""",
    }
    for name, query in statements.items():
        con.execute(f"COPY ({query}) TO {_lit(out / name)} (FORMAT parquet)")
    if con.execute("SELECT count(*) FROM run_meta").fetchall()[0][0]:
        con.execute(f"""COPY (SELECT m.name AS run, d.topic, d.doc, d.rank, d.score, d.line_no, d.submitted_rank
                        FROM run_row_data d JOIN run_meta m USING (run_id) ORDER BY run, d.topic, d.rank)
                        TO {_lit(out / "runs")} (FORMAT parquet, PARTITION_BY (run))""")
    if con.execute("SELECT count(*) FROM qrels_meta").fetchall()[0][0]:
        con.execute(f"""COPY (SELECT m.name AS qrels, d.topic, d.doc, d.grade
                        FROM qrels_data d JOIN qrels_meta m USING (qrels_id) ORDER BY qrels, d.topic, d.doc)
                        TO {_lit(out / "qrels")} (FORMAT parquet, PARTITION_BY (qrels))""")
    manifest = {
        "format": "evalstore-parquet-layout",
        "layout_version": LAYOUT_VERSION,
        "schema_version": store.schema_version(),
        "engine_version": __version__,
        "runs": [
            {"name": n, "sha256": h, "n_rows": r, "n_topics": t}
            for n, h, r, t in con.execute(
                "SELECT name, sha256, n_rows, n_topics FROM run_meta ORDER BY name"
            ).fetchall()
        ],
        "qrels": [
            {"name": n, "sha256": h, "n_judged": r, "n_topics": t}
            for n, h, r, t in con.execute(
                "SELECT name, sha256, n_judged, n_topics FROM qrels_meta ORDER BY name"
            ).fetchall()
        ],
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def import_store(store: StoreHandle, folder: str | os.PathLike) -> dict[str, int]:
    """Read a layout folder into ``store`` in one transaction; returns counts of what was added."""
    src = Path(folder)
    try:
        manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{src} has no {MANIFEST}: not an evalstore Parquet layout") from None
    if manifest.get("layout_version") != LAYOUT_VERSION:
        raise StoreError(f"{src}: layout version {manifest.get('layout_version')} is not {LAYOUT_VERSION}")
    con = store.con
    names = {r["name"] for r in manifest["runs"]}
    qnames = {q["name"] for q in manifest["qrels"]}
    in_list = "SELECT name FROM {} WHERE name IN (SELECT unnest(?))"
    clash = [r[0] for r in con.execute(in_list.format("run_meta"), [sorted(names)]).fetchall()]
    qclash = [r[0] for r in con.execute(in_list.format("qrels_meta"), [sorted(qnames)]).fetchall()]
    if clash or qclash:
        raise StoreError(
            f"the store already has {', '.join(map(repr, clash + qclash))}; import into another store or drop them"
        )
    run_cols = _columns(store, "run_meta", ("run_id",))
    qrels_cols = _columns(store, "qrels_meta", ("qrels_id",))
    sub_cols = _columns(store, "subsample_meta", ("qrels_id", "parent_id"))
    eval_cols = _columns(store, "evaluations", ("run_id", "qrels_id"))
    hive = "hive_partitioning = true, hive_types_autocast = false"
    with store.transaction():
        con.execute(
            f"INSERT INTO qrels_meta ({', '.join(qrels_cols)}) SELECT {', '.join(qrels_cols)} "
            f"FROM read_parquet({_lit(src / 'qrels_meta.parquet')})"
        )
        con.execute(
            f"INSERT INTO run_meta ({', '.join(run_cols)}) SELECT {', '.join(run_cols)} "
            f"FROM read_parquet({_lit(src / 'run_meta.parquet')})"
        )
        if qnames and (src / "qrels").is_dir():
            con.execute(f"""INSERT INTO qrels_data (qrels_id, topic, doc, grade)
                SELECT m.qrels_id, q.topic, q.doc, q.grade
                FROM read_parquet({_lit(src / "qrels" / "*" / "*.parquet")}, {hive}) q
                JOIN qrels_meta m ON m.name = q.qrels""")
        if names and (src / "runs").is_dir():
            con.execute(f"""INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
                SELECT m.run_id, r.topic, r.doc,
                       coalesce(r.rank, row_number() OVER (PARTITION BY m.run_id, r.topic
                                                           ORDER BY r.score DESC, r.doc DESC)),
                       r.line_no, r.submitted_rank, r.score
                FROM read_parquet({_lit(src / "runs" / "*" / "*.parquet")}, {hive}) r
                JOIN run_meta m ON m.name = r.run""")
        con.execute(f"""INSERT INTO subsample_meta (qrels_id, parent_id, {", ".join(sub_cols)})
            SELECT q.qrels_id, p.qrels_id, {", ".join("s." + c for c in sub_cols)}
            FROM read_parquet({_lit(src / "subsamples.parquet")}) s
            JOIN qrels_meta q ON q.name = s.qrels JOIN qrels_meta p ON p.name = s.parent""")
        con.execute(f"""INSERT INTO evaluations (run_id, qrels_id, {", ".join(eval_cols)})
            SELECT r.run_id, q.qrels_id, {", ".join("e." + c for c in eval_cols)}
            FROM read_parquet({_lit(src / "evaluations.parquet")}) e
            JOIN run_meta r ON r.name = e.run JOIN qrels_meta q ON q.name = e.qrels""")
        con.execute(f"""INSERT INTO score_data (run_id, qrels_id, metric, topic, value)
            SELECT r.run_id, q.qrels_id, s.metric, s.topic, s.value
            FROM read_parquet({_lit(src / "scores.parquet")}) s
            JOIN run_meta r ON r.name = s.run JOIN qrels_meta q ON q.name = s.qrels""")
    return {"runs": len(names), "qrels": len(qnames)}


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

"""Runs and qrels given as Python objects (the notebook API): ``{topic: {doc: score}}`` and
``{topic: {doc: grade}}`` dicts, DataFrames, Arrow tables and namedtuples (see :mod:`.sources`),
stored with the same rules as files. The content hash is taken over the sorted rows, so the same
content under the same name is a no-op, as for files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .checks import check_name, group_stats
from .formats import QRELS_COLUMNS, RUN_COLUMNS, TREC_RANK_SQL
from .sources import qrels_table, run_table
from .staging import Group, Staging
from .write import IngestResult, store_qrels, store_runs

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def qrels_from_dict(
    store: StoreHandle,
    name: str,
    qrels: Any,
    *,
    replace: bool = False,
    source: str = "<dict>",
    gains: str | None = None,
) -> IngestResult:
    """Store qrels given as a dict, DataFrame, Arrow table or namedtuples as the set ``name``
    (``gains``: the set's declared gains as stored, ``1:10``, checked by the caller)."""
    check_name(name, "qrels set")
    table = qrels_table(qrels, f"qrels {name!r}")
    con = store.con
    with store.transaction(), Staging(con, "qrels", QRELS_COLUMNS) as st:
        con.register("_ingest_source", table)
        try:
            con.execute(f"INSERT INTO {st.raw} SELECT 0, 0, NULL, 0, topic, doc, grade FROM _ingest_source")
        finally:
            con.unregister("_ingest_source")
        st.define_view()
        sha = con.execute(
            "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || grade, chr(10) "
            f"ORDER BY topic, doc)) FROM {st.rows}"
        ).fetchall()[0][0]
        stats = con.execute(f"SELECT count(*), count(DISTINCT topic), max(grade) FROM {st.rows}").fetchall()[0]
        res = store_qrels(store, st, Group(0, [], sha, name=name), stats, "dict", replace, gains)
        res.files = [source]
        return res


def run_from_dict(
    store: StoreHandle, name: str, run: Any, *, replace: bool = False, source: str = "<dict>"
) -> IngestResult:
    """Store a run given as a dict, DataFrame, Arrow table or namedtuples as ``name``, ranked like
    trec_eval (score descending, ties by docno descending)."""
    check_name(name, "run")
    table: pa.Table = run_table(run, f"run {name!r}")
    con = store.con
    with store.transaction(), Staging(con, "runs", RUN_COLUMNS) as st:
        con.register("_ingest_source", table)
        try:
            con.execute(f"INSERT INTO {st.raw} SELECT 0, 0, ln, 0, topic, doc, NULL, score, NULL FROM _ingest_source")
        finally:
            con.unregister("_ingest_source")
        st.define_view()
        g = Group(0, [], run_sha256(con, st.rows), name=name)
        res = store_runs(store, st, [g], group_stats(st), {}, replace, "dict", TREC_RANK_SQL)[0]
        res.files = [source]
        return res


def run_sha256(con: Any, relation: str) -> str:
    """The content hash of a run given in memory: its rows ``topic, doc, score`` (in ``relation``)
    in order of topic and document, whatever order they came in."""
    return con.execute(
        "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || score, chr(10) "
        f"ORDER BY topic, doc)) FROM {relation}"
    ).fetchall()[0][0]

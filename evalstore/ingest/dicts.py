"""Runs and qrels given as Python dicts (the notebook API): ``{topic: {doc: score}}`` and
``{topic: {doc: grade}}``, stored with the same rules as files."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import IngestError
from .checks import group_stats
from .formats import QRELS_COLUMNS, RUN_COLUMNS, TREC_RANK_SQL
from .staging import Group, Staging
from .write import IngestResult, store_qrels, store_runs


def _flatten(nested: Mapping, cast, what: str, rule: str) -> tuple[list[str], list[str], list]:
    """``{topic: {doc: value}}`` as three parallel columns (topics, docs, cast values)."""
    topics = [str(t) for t, docs in nested.items() for _ in docs]
    docs = [str(d) for ds in nested.values() for d in ds]
    try:
        values = [cast(v) for ds in nested.values() for v in ds.values()]
    except (TypeError, ValueError) as e:
        raise IngestError(f"{what}: {rule} ({e})") from None
    if not topics:
        raise IngestError(f"{what} is empty")
    return topics, docs, values


def qrels_from_dict(store, name: str, qrels: Mapping, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: grade}}`` as a qrels set (used by the notebook API)."""
    topics, docs, grades = _flatten(qrels, int, f"qrels {name!r}", "grades must be integers")
    con = store.con
    with store.transaction(), Staging(con, "qrels", QRELS_COLUMNS) as st:
        con.execute(
            f"INSERT INTO {st.raw} SELECT 0, 0, NULL, 0, unnest($1), unnest($2), unnest($3)", [topics, docs, grades]
        )
        st.define_view()
        sha = con.execute(
            "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || grade, chr(10) "
            f"ORDER BY topic, doc)) FROM {st.rows}"
        ).fetchall()[0][0]
        stats = con.execute(f"SELECT count(*), count(DISTINCT topic), max(grade) FROM {st.rows}").fetchall()[0]
        res = store_qrels(store, st, Group(0, [], sha, name=name), stats, "dict", replace, None)
        res.files = ["<dict>"]
        return res


def run_from_dict(store, name: str, run: Mapping, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: score}}`` as a run, ranked like trec_eval (used by the notebook API)."""
    topics, docs, scores = _flatten(run, float, f"run {name!r}", "scores must be numbers")
    con = store.con
    with store.transaction(), Staging(con, "runs", RUN_COLUMNS) as st:
        con.execute(
            f"INSERT INTO {st.raw} SELECT 0, 0, unnest(range(1, len($1) + 1)), 0, unnest($1), unnest($2), "
            "NULL, unnest($3), NULL",
            [topics, docs, scores],
        )
        st.define_view()
        bad = con.execute(f"SELECT topic, doc FROM {st.rows} WHERE NOT isfinite(score) LIMIT 1").fetchall()
        if bad:
            raise IngestError(f"run {name!r}: the score of topic {bad[0][0]!r}, document {bad[0][1]!r} is not finite")
        sha = con.execute(
            "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || score, chr(10) "
            f"ORDER BY topic, doc)) FROM {st.rows}"
        ).fetchall()[0][0]
        g = Group(0, [], sha, name=name)
        res = store_runs(store, st, [g], group_stats(st), {}, replace, "dict", TREC_RANK_SQL)[0]
        res.files = ["<dict>"]
        return res

"""Gains: how a relevance grade becomes a gain, and the checks that go with it.

A metric that takes ``gains=`` (levels 1..n, NTCIREVAL order) uses them; without it, the qrels
set's declared default gains (``ingest qrels --gains``), else gain = grade (trec_eval). Grades of
0 and below always have gain 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from ..errors import MetricError
from .params import parse_gains


def gain_expr(gains: tuple[float, ...] | None) -> str:
    """SQL mapping a grade to its gain: grade itself for grades > 0 (trec_eval), or the declared
    gain of level g (levels 1..n; level 0 and negative grades have gain 0)."""
    if gains is None:
        return "CASE WHEN grade > 0 THEN grade ELSE 0 END"
    # a CASE rather than a list lookup: the same SQL runs on Spark, whose arrays count from 0
    arms = " ".join(f"WHEN {level} THEN CAST({float(g)!r} AS DOUBLE)" for level, g in enumerate(gains, 1))
    return f"CASE grade {arms} ELSE 0 END"


def stored_gains(text: str | None) -> tuple[float, ...] | None:
    """A qrels set's declared gains as stored in ``qrels_meta.default_gains`` (``'1:2:3'``), or None:
    read by the one gains rule, :func:`evalstore.metrics.params.parse_gains`."""
    return parse_gains(text) if text else None


def declared_gains(con: duckdb.DuckDBPyConnection, qrels_ids: Sequence[int]) -> dict[int, tuple[float, ...] | None]:
    """The declared default gains of each qrels set."""
    rows = con.execute(
        "SELECT qrels_id, default_gains FROM qrels_meta WHERE qrels_id IN (SELECT unnest(?::INTEGER[]))",
        [list(qrels_ids)],
    ).fetchall()
    found = {qid: stored_gains(g) for qid, g in rows}
    return {qid: found.get(qid) for qid in qrels_ids}


def check_gains(
    con: duckdb.DuckDBPyConnection,
    qrels_ids: Sequence[int],
    gains: tuple[float, ...] | None,
    names: Mapping[int, str],
) -> None:
    """Every grade of the qrels sets must have a gain: one gain per level 1..top grade."""
    if gains is None:
        return
    for qid in qrels_ids:
        top = con.execute("SELECT max(grade) FROM qrels_data WHERE qrels_id = ?", [qid]).fetchall()[0][0]
        if top is not None and top > len(gains):
            raise MetricError(
                f"gains={':'.join(f'{g:g}' for g in gains)} declares {len(gains)} relevance levels but qrels "
                f"{names.get(qid, qid)!r} has grade {top}; give one gain per level 1..{top} (as NTCIREVAL's -g)"
            )


def top_grade(con: duckdb.DuckDBPyConnection, qrels_ids: Sequence[int]) -> float:
    """Highest grade of the qrels sets and of the sets they were subsampled from."""
    ids = [int(q) for q in qrels_ids]
    top = con.execute(
        """SELECT max(grade) FROM qrels_data WHERE qrels_id IN (SELECT unnest($1::INTEGER[]))
           OR qrels_id IN (SELECT parent_id FROM subsample_meta WHERE qrels_id IN (SELECT unnest($1::INTEGER[])))""",
        [ids],
    ).fetchall()[0][0]
    return float(top or 1)

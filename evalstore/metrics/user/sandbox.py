"""Running measures of one's own: on a sandboxed connection that holds only what they declared.

The engine builds the ranked judged list as for any metric; :func:`scores` then takes the
relations the measures declare (:mod:`.relations`) as Arrow tables from it (``fetch``: a query over
the ranked list's relations, run by the engine on its own connection) and runs each SQL definition
on a new in-memory DuckDB database of its own: external access off (no file, no network), no
Python variables read as tables, configuration locked, no evalstore function, and nothing else in
it but those tables. A Python definition gets the same tables. Every evaluated (qrels set, run,
topic) gets a value as the built-ins give it (:func:`evalstore.metrics.engine.value_sql`: 0 where the
measure returns no row, ir_measures' padding), so a topic a run did not retrieve scores what it
scores for a built-in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from ...db import lockdown
from ...db.connection import Settings
from ...db.query import arrow_table
from ...errors import MetricError
from . import relations
from .definition import KEY_SPELLINGS, SAMPLE_VALUES, UserMeasure, check_sql

if TYPE_CHECKING:
    from ..options import EvalOptions
    from ..registry import MetricInstance

_OUT = pa.schema([("qrels_id", pa.int32()), ("run_id", pa.int32()), ("topic", pa.string()), ("value", pa.float64())])


@contextmanager
def sandbox() -> Iterator[duckdb.DuckDBPyConnection]:
    """A new in-memory database, sandboxed as ``evalstore sql --sandbox`` is
    (:func:`evalstore.db.lockdown.config` at level ``SANDBOX``: no external access, no local file
    system, no extension, no Python variable read as a table, configuration locked), on one thread;
    closed on leaving."""
    base = Settings.resolve(threads=1, temp_directory="").config()
    con = duckdb.connect(":memory:", config=lockdown.config(base, lockdown.Lockdown.SANDBOX))
    try:
        lockdown.lock(con, lockdown.Lockdown.SANDBOX)
        yield con
    finally:
        con.close()


def check_runs(measure: UserMeasure) -> tuple[str, str]:
    """Run an SQL definition on empty relations in the sandbox: DuckDB binds it (unknown columns
    and functions are found now, not at the first evaluation) and its columns are checked; how it
    names its key columns."""
    if measure.language != "sql":
        return measure.keys
    with sandbox() as con:
        for rel in measure.reads:
            con.register(rel, relations.empty(rel, measure.needs))
        try:
            out = arrow_table(con, measure.render(SAMPLE_VALUES))
        except duckdb.Error as e:
            raise MetricError(f"measure {measure.name}: DuckDB cannot run its SQL: {str(e).splitlines()[0]}") from None
    _normalised(measure.name, out)
    names = [c.lower() for c in out.column_names]
    q, r = (next(c for c in spellings if c in names) for spellings in KEY_SPELLINGS)
    return q, r


def scores(
    items: Sequence[tuple[MetricInstance, str]],
    options: EvalOptions,
    fetch: Callable[[str], pa.Table],
    values: Callable[[MetricInstance], dict[str, str]],
    value_sql: Callable[[MetricInstance, EvalOptions], str],
) -> pa.Table:
    """``qrels_id, run_id, topic, key, value`` of every (instance, key) of ``items`` (user
    measures) for every evaluated (qrels set, run, topic) of the ranked list; ``fetch(query)``: the
    rows of a query over the ranked list's relations; ``values(instance)``: its placeholders'
    literals; ``value_sql``: the engine's value of a topic from the measure's row ``m``
    (:func:`evalstore.metrics.engine.value_sql`)."""
    measures = [i.spec.user for i, _ in items]
    reads = frozenset().union(*(m.reads for m in measures if m))
    needs = frozenset().union(*(m.needs for m in measures if m))
    tables = {rel: relations.conformed(rel, fetch(relations.query(rel, needs)), needs) for rel in sorted(reads)}
    topics = fetch("SELECT qrels_id, run_id, topic, in_run FROM rl_topics")
    out = []
    with sandbox() as con:
        for rel, table in tables.items():
            con.register(rel, table)
        con.register("_topics", topics)
        for inst, key in items:
            measure = inst.spec.user
            assert measure is not None
            rows = _run(con, measure, inst, tables, values(inst))
            con.register("_measure", rows)
            twice = con.execute(
                "SELECT topic FROM _measure GROUP BY qrels_id, run_id, topic HAVING count(*) > 1 LIMIT 1"
            ).fetchall()
            if twice:
                raise MetricError(f"measure {measure.name} returns several rows for topic {twice[0][0]!r} of one run")
            out.append(
                arrow_table(
                    con,
                    f"SELECT t.qrels_id, t.run_id, t.topic, $key::VARCHAR AS key, {value_sql(inst, options)} AS value "
                    "FROM _topics t LEFT JOIN _measure m USING (qrels_id, run_id, topic)",
                    {"key": key},  # type: ignore[arg-type]
                )
            )
            con.unregister("_measure")
    if not out:
        return pa.table({"qrels_id": [], "run_id": [], "topic": [], "key": [], "value": []})
    return pa.concat_tables(out)


def _run(
    con: duckdb.DuckDBPyConnection,
    measure: UserMeasure,
    inst: MetricInstance,
    tables: dict[str, pa.Table],
    values: dict[str, str],
) -> pa.Table:
    """One measure's rows ``qrels_id, run_id, topic, value``."""
    if measure.language == "python":
        return _normalised(measure.name, _call(measure, inst, tables))
    sql = measure.render(values)
    check_sql(measure, sql)  # the rendered text is what runs: checked again
    try:
        out = arrow_table(con, sql)
    except duckdb.Error as e:
        raise MetricError(f"measure {measure.name} failed in DuckDB: {str(e).splitlines()[0]}") from None
    return _normalised(measure.name, out)


def _call(measure: UserMeasure, inst: MetricInstance, tables: dict[str, pa.Table]) -> Any:
    first, *others = sorted(measure.reads, key=lambda r: (r != "ranked", r))
    kwargs: dict[str, Any] = {rel: tables[rel] for rel in others}
    if measure.cutoff != "none":
        kwargs["k"] = inst.cutoff
    assert measure.function is not None
    try:
        return measure.function(tables[first], **kwargs)
    except MetricError:
        raise
    except Exception as e:  # the user's function: its error, with the measure's name
        raise MetricError(f"measure {measure.name} raised {type(e).__name__}: {e}") from e


def _normalised(name: str, out: Any) -> pa.Table:
    """A measure's result as ``qrels_id, run_id, topic, value`` (either spelling of the keys)."""
    if not isinstance(out, pa.Table):
        try:
            out = pa.Table.from_pandas(out, preserve_index=False) if hasattr(out, "to_numpy") else pa.table(out)
        except (TypeError, ValueError, pa.ArrowException) as e:
            raise MetricError(f"measure {name} returned {type(out).__name__}, not an Arrow table ({e})") from None
    cols = [c.lower() for c in out.column_names]
    picked = []
    for spellings in (*KEY_SPELLINGS, ("topic",), ("value",)):
        found = [c for c in spellings if c in cols]
        if len(found) != 1:
            raise MetricError(
                f"measure {name} returns the columns {', '.join(out.column_names) or 'none'}; it returns "
                "qrels, run, topic, value (qrels_id and run_id also do)"
            )
        picked.append(cols.index(found[0]))
    if len(cols) != 4:
        raise MetricError(f"measure {name} returns {len(cols)} columns ({', '.join(out.column_names)}); "
                          "it returns qrels, run, topic, value")  # fmt: skip
    kind = out.schema.field(picked[3]).type
    if not (
        pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind) or pa.types.is_null(kind)
    ):
        raise MetricError(f"measure {name}: its value column is not a number ({kind})")
    try:
        return pa.table([out.column(i) for i in picked], names=_OUT.names).cast(_OUT)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise MetricError(f"measure {name}: its value column is not a number ({e})") from None

"""Runs and qrels given as Python objects, as Arrow tables: dicts, pandas / polars DataFrames,
pyarrow Tables, and iterables of namedtuples (ir_datasets' ``qrels_iter()``, ``scoreddocs_iter()``).

Column names: ir_measures' (``query_id, doc_id, relevance, score``), ranx's (``q_id, doc_id,
score``; a ranx qrels table's ``score`` is the grade) or evalstore's (``topic, doc, grade,
score``); ``qid``/``docno``/``rel`` are accepted too, other columns (``iteration``, ``Q0``,
``rank``, ``run``) are ignored. ranx's ``Qrels`` and ``Run`` objects are read through their dicts.
Values are checked as a file's would be: topics and documents present, not empty and without a
blank, tab, line break or control character (a run or qrels file separates its fields and lines by
them: ``export run`` would write ``d 1`` as two fields, read back as document ``d``), grades
integers (of DuckDB's INTEGER range), scores finite numbers, each (topic, doc) once. A run table keeps the
order of its rows (``ln``, for the NTCIREVAL convention's file order).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import IngestError

_ALIASES = {
    "topic": ("topic", "query_id", "q_id", "qid", "query"),
    "doc": ("doc", "doc_id", "docno", "docid"),
    "grade": ("grade", "relevance", "rel", "label", "score"),  # ranx's qrels call the grade 'score'
    "score": ("score",),
}
#: DuckDB's INTEGER, which grades are stored as.
MAX_GRADE = 2**31 - 1


def is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike)) or (
        isinstance(obj, (list, tuple)) and bool(obj) and all(isinstance(p, (str, os.PathLike)) for p in obj)
    )


def is_ranx(obj: Any) -> bool:
    """A ranx ``Qrels`` or ``Run`` object (read through ``to_dict()``)."""
    return type(obj).__module__.split(".")[0] == "ranx" and callable(getattr(obj, "to_dict", None))


def qrels_table(obj: Any, what: str = "qrels") -> pa.Table:
    """``(topic, doc, grade)`` of qrels given as a dict, DataFrame, Arrow table or namedtuples."""
    if is_ranx(obj):
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
        _nested(obj, what, "grade")
        topics = [str(t) for t, docs in obj.items() for _ in docs]
        docs = [str(d) for ds in obj.values() for d in ds]
        grades = [g for ds in obj.values() for g in ds.values()]
        return _checked(pa.table({"topic": topics, "doc": docs, "grade": _ints(grades, what)}), what, "qrels", False)
    t = _columns(_arrow(obj, what), ("topic", "doc", "grade"), what)
    return _checked(t, what, "qrels", unique=True)


def run_table(obj: Any, what: str = "run", *, allow_empty: bool = False) -> pa.Table:
    """``(topic, doc, score, ln)`` of a run given as a dict, DataFrame, Arrow table or namedtuples
    (``allow_empty``: a run with no rows is returned as an empty table instead of an error)."""
    if is_ranx(obj):
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
        _nested(obj, what, "score")
        t = _dict_rows(obj, what)
        unique = False  # a dict holds each document once per topic
    else:
        raw = _arrow(obj, what)
        t = _columns(raw, ("topic", "doc", "score"), what)
        unique = True
    t = t.append_column("ln", pa.array(np.arange(1, t.num_rows + 1, dtype=np.int64)))
    if allow_empty and t.num_rows == 0:
        return t
    return _checked(t, what, "run", unique, raw if unique else None)


#: Columns that name the run a row belongs to (TREC's tag; ir_measures' / ranx's run name).
_TAG_COLUMNS = ("tag", "run", "run_id", "runid", "run_name", "system")


def _runs_in(t: pa.Table) -> tuple[str, list[Any]] | None:
    """The tag column of a table that holds the rows of several runs, and the runs in it."""
    lower = {c.lower(): c for c in t.column_names}
    for name in _TAG_COLUMNS:
        col = lower.get(name)
        if col is not None:
            tags = pc.unique(t.column(col).combine_chunks()).to_pylist()
            if len(tags) > 1:
                return col, tags
    return None


def _dict_rows(obj: Mapping, what: str) -> pa.Table:
    """``(topic, doc, score)`` of ``{topic: {doc: score}}`` without a Python object per row: the
    docnos and scores chained straight from the dicts, each topic repeated by Arrow (keys that are
    not strings are converted)."""
    lens = np.fromiter((len(d) for d in obj.values()), dtype=np.int64, count=len(obj))
    try:
        names = pa.array(list(obj), pa.string())
        docs = pa.array(list(itertools.chain.from_iterable(obj.values())), pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        names = pa.array([str(t) for t in obj], pa.string())
        docs = pa.array([str(d) for ds in obj.values() for d in ds], pa.string())
    topic = names.take(pa.array(np.repeat(np.arange(len(obj), dtype=np.int64), lens)))
    scores = list(itertools.chain.from_iterable(ds.values() for ds in obj.values()))
    return pa.table({"topic": topic, "doc": docs, "score": _floats(scores, what)})


# ----------------------------------------------------------------------------------------------
def _nested(obj: Mapping, what: str, value: str) -> None:
    """A dict must be ``{topic: {doc: value}}``."""
    for topic, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise IngestError(
                f"{what}: a dict maps each topic to {{doc: {value}}}; topic {topic!r} maps to "
                f"{type(docs).__name__} {docs!r:.40}"
            )


def _arrow(obj: Any, what: str) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    to_arrow = getattr(obj, "to_arrow", None)  # polars
    if callable(to_arrow) and type(obj).__module__.startswith("polars"):
        return to_arrow()
    if type(obj).__module__.startswith("pandas"):
        return pa.Table.from_pandas(obj, preserve_index=False)
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        rows = list(obj)
        if not rows:
            return pa.table({"topic": pa.array([], pa.string()), "doc": pa.array([], pa.string()),
                             "grade": pa.array([], pa.int32()), "score": pa.array([], pa.float64())})  # fmt: skip
        first = rows[0]
        fields = getattr(first, "_fields", None)
        if fields is None:
            raise IngestError(
                f"{what}: rows must be namedtuples with fields such as query_id, doc_id, relevance / score "
                f"(got {type(first).__name__})"
            )
        return pa.table({f: [getattr(r, f) for r in rows] for f in fields})
    raise IngestError(
        f"{what}: expected a dict {{topic: {{doc: value}}}}, a file path, a pandas or polars DataFrame, a pyarrow "
        f"Table or namedtuples, not {type(obj).__name__}"
    )


def _columns(t: pa.Table, wanted: tuple[str, ...], what: str) -> pa.Table:
    lower = {c.lower(): c for c in t.column_names}
    cols = {}
    for name in wanted:
        found = next((lower[a] for a in _ALIASES[name] if a in lower), None)
        if found is None:
            raise IngestError(
                f"{what} has no column for {name!r} (looked for {', '.join(_ALIASES[name])}; "
                f"columns: {', '.join(t.column_names)})"
            )
        cols[name] = t.column(found)
    out = {"topic": _strings(cols["topic"]), "doc": _strings(cols["doc"])}
    if "grade" in cols:
        out["grade"] = _ints(cols["grade"].to_pylist(), what)
    if "score" in cols:
        out["score"] = _score_column(cols["score"], what)
    return pa.table(out)


def _score_column(col: pa.ChunkedArray, what: str) -> pa.Array:
    """A numeric score column as doubles, in Arrow (no Python float per row); other columns, nulls,
    values not finite or not exactly doubles: one by one (the message)."""
    if pa.types.is_floating(col.type) or pa.types.is_integer(col.type):
        try:
            arr = pc.cast(col, pa.float64()).combine_chunks()  # (safe: an integer beyond 2^53 raises)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            arr = None
        if _all_finite(arr):
            return arr
    return _floats(col.to_pylist(), what)


def _all_finite(arr: pa.Array | None) -> bool:
    """``arr`` was made, and holds no null and only finite numbers (scores as evalstore takes them)."""
    return arr is not None and not arr.null_count and (len(arr) == 0 or pc.all(pc.is_finite(arr)).as_py())


def _strings(col: pa.ChunkedArray) -> pa.Array:
    return pc.cast(col, pa.string()).combine_chunks()


def _ints(values: list, what: str) -> pa.Array:
    try:  # Python ints only (no bool, float or text: those are judged one by one below)
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        arr = None
    if arr is not None and len(arr) and pa.types.is_integer(arr.type) and not arr.null_count:
        low, high = pc.min_max(arr).values()
        if -MAX_GRADE <= low.as_py() and high.as_py() <= MAX_GRADE:
            return arr.cast(pa.int32())
    out = []
    for v in values:
        if isinstance(v, bool) or v is None:
            raise IngestError(f"{what}: grade {v!r} is not an integer")
        if isinstance(v, float):
            if not (math.isfinite(v) and v.is_integer()):
                raise IngestError(f"{what}: grade {v!r} is not an integer")
            v = int(v)
        try:
            g = int(v)
        except (TypeError, ValueError):
            raise IngestError(f"{what}: grade {v!r} is not an integer") from None
        if not -MAX_GRADE <= g <= MAX_GRADE:
            raise IngestError(f"{what}: grade {g} is out of range (grades lie between -{MAX_GRADE} and {MAX_GRADE})")
        out.append(g)
    return pa.array(out, pa.int32())


def _score_problem(v: Any) -> str | None:
    """Why ``v`` is not a score (None when it is one)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
        return "is not a number"
    try:
        f = float(v)
    except (OverflowError, ValueError, TypeError):
        return "is not a finite number (too large)"
    return None if math.isfinite(f) else "is not finite (scores must be finite numbers)"


def _floats(values: list, what: str) -> pa.Array:
    try:
        arr = pa.array(values, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        arr = None
    if not _all_finite(arr):
        found = next(((v, w) for v in values if (w := _score_problem(v)) is not None), None)
        if found is None:  # numbers Arrow would not convert as they are (an int beyond 2^53): float() each
            return pa.array([float(v) for v in values], pa.float64())
        bad, why = found
        shown = repr(bad) if len(repr(bad)) <= 40 else repr(bad)[:37] + "..."
        raise IngestError(f"{what}: score {shown} {why}")
    return arr


_DUPLICATE = {"qrels": "judged twice", "run": "retrieved twice (trec_eval refuses duplicate documents)"}


def _checked(t: pa.Table, what: str, kind: str, unique: bool, given: pa.Table | None = None) -> pa.Table:
    """``t`` if it has rows, a topic and a doc in every row and (``unique``) each (topic, doc) once
    (``given``: the run's table as given, whose tag column explains a duplicate)."""
    if t.num_rows == 0:
        raise IngestError(f"{what} is empty")
    _no_nulls(t, what)
    _one_field(t, what)
    if unique:
        _unique(t, what, _DUPLICATE[kind], given)
    return t


def _no_nulls(t: pa.Table, what: str) -> None:
    for c in ("topic", "doc"):
        if t.column(c).null_count:
            raise IngestError(f"{what}: a {c} is missing (null)")


#: what a topic or docno may not hold: the file readers' field separators (blank, tab, CR), the
#: line break, and the control characters they refuse (RE2 syntax, for Arrow)
_NOT_IN_A_FIELD = r"[\x00-\x20\x7f]"


def no_field_breaker(data: Any) -> bool:
    """No byte of ``data`` (UTF-8 text's bytes: a buffer, ``bytes``) is one of
    :data:`_NOT_IN_A_FIELD`'s, 0x00-0x20 and 0x7f (UTF-8's multi-byte characters hold no byte below
    0x80): one scan of the bytes in numpy, its minimum and maximum when they settle it."""
    b = np.frombuffer(data, dtype=np.uint8)
    if len(b) == 0 or (int(b.min()) > 0x20 and int(b.max()) < 0x7F):
        return True
    return not bool(((b <= 0x20) | (b == 0x7F)).any())


def _surely_one_field(col: pa.ChunkedArray | pa.Array) -> bool:
    """True when no value of ``col`` is empty and its strings' bytes hold none of
    :data:`_NOT_IN_A_FIELD`'s (:func:`no_field_breaker`, no regular expression per value). False:
    look with the expression (a sliced array's buffer may hold bytes of values outside it)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        if chunk.type not in (pa.string(), pa.large_string()) or pc.min(pc.binary_length(chunk)).as_py() == 0:
            return False
        data = chunk.buffers()[2]
        if data is not None and not no_field_breaker(data):
            return False
    return True


def _one_field(t: pa.Table, what: str) -> None:
    """Every topic and docno is one field of a run or qrels file: not empty, and without a blank,
    tab, line break or control character."""
    for c in ("topic", "doc"):
        col = t.column(c)
        if _surely_one_field(col):
            continue
        bad = pc.or_(pc.equal(pc.utf8_length(col), 0), pc.match_substring_regex(col, _NOT_IN_A_FIELD))
        if pc.any(bad).as_py():
            value = pc.filter(col, bad)[0].as_py()
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise IngestError(
                f"{what}: {c} {shown} "
                + ("is empty" if not value else "holds a blank, tab, line break or control character")
                + f"; a run or qrels file could not hold it as one field (export run would write it as other "
                f"{'topics' if c == 'topic' else 'documents'}), as the file readers refuse it"
            )


def _unique(t: pa.Table, what: str, problem: str, given: pa.Table | None = None) -> None:
    counts = t.group_by(["topic", "doc"]).aggregate([([], "count_all")])
    if counts.num_rows != t.num_rows:
        dup = counts.filter(pc.greater(counts.column("count_all"), 1)).slice(0, 1).to_pylist()[0]
        several = _runs_in(given) if given is not None else None
        if several is not None:  # a table of several runs: say so, not that a run lists a doc twice
            col, tags = several
            shown = ", ".join(repr(x) for x in tags[:5]) + (", ..." if len(tags) > 5 else "")
            raise IngestError(
                f"{what}: the table holds {len(tags)} runs (its column {col!r}: {shown}), so document "
                f"{dup['doc']!r} of topic {dup['topic']!r} appears more than once; give one run per table, e.g. "
                f"{{tag: rows for tag, rows in df.groupby({col!r})}} to evalstore.evaluate, or ingest each run "
                f"under its own name"
            )
        raise IngestError(f"{what}: document {dup['doc']!r} of topic {dup['topic']!r} is {problem}")

"""The second layer of read-only SQL: what a statement may be, read with DuckDB's own parser.

The first layer is DuckDB's: a store opened for ad-hoc or untrusted SQL is a read-only connection
without file access and with its configuration locked (:mod:`.lockdown`), so no statement it
accepts changes the store, a setting or a file, whatever its text says. This module refuses,
before anything runs, the statements read-only SQL has no use for, with a message that says why;
on a store opened for writing in one's own program (``store.sql(q)`` without ``write=True``) it
is, beside DuckDB's read-only transaction, the only guard against files and settings.

It reads a statement only as DuckDB does: its kind as DuckDB's parser reports it
(``duckdb.extract_statements``; a kind the Python package cannot name is refused), the parse tree
of a query (``json_serialize_sql``), and DuckDB's tokenizer for the statement an ``EXPLAIN``
explains and the name of a ``PRAGMA``; never a regular expression.

**Read-only** allows:

* queries (``SELECT``, ``FROM ...``, ``WITH ... SELECT``, ``VALUES``, ``SHOW``, ``DESCRIBE``,
  ``SUMMARIZE``, ``UNPIVOT``) whose parse tree calls only allowed functions: every scalar and
  aggregate function except those that change state (:data:`REFUSED_FUNCTIONS`), and only the
  table functions of :data:`READ_ONLY_TABLE_FUNCTIONS`; the CSV reader's options that store
  rejected rows are refused;
* ``EXPLAIN`` and ``EXPLAIN ANALYZE`` of an allowed statement: DuckDB reads a parenthesised group
  after ``EXPLAIN [ANALYZE]`` either as options or as a parenthesised query, so both readings are
  checked and each must be allowed;
* ``PRAGMA`` calls that only describe (:data:`DESCRIBING_PRAGMAS`).

Everything else is refused: ``INSERT`` ... ``DROP``, ``SET``, ``ATTACH``, ``INSTALL``, ``LOAD``,
``CALL``, ``CHECKPOINT``, ``EXPORT``/``IMPORT DATABASE``, transactions, ``PREPARE``, ``PIVOT``
(several statements) and every ``COPY``: write a result with ``evalstore sql -o FILE`` (or
``store.sql(...).arrow()``), or pass ``write=True``.

**Sandbox** adds: the query names only relations of the store and the common table expressions in
scope where it names them (no ``FROM 'file.csv'``), and calls only the table functions of
:data:`SANDBOX_TABLE_FUNCTIONS` (no file reader; not ``test_all_types()``, which ignores an
interrupt for minutes).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterator
from typing import Any

import duckdb

from ..errors import StoreError

#: PRAGMAs that only describe the database.
DESCRIBING_PRAGMAS = frozenset({
    "table_info", "show_tables", "show_tables_expanded", "database_size", "storage_info", "version",
    "database_list", "functions", "show", "metadata_info", "platform", "user_agent", "collations",
})  # fmt: skip

#: Scalar functions that change the connection or write: refused in read-only SQL.
REFUSED_FUNCTIONS = frozenset({"nextval", "setval", "setseed", "write_log"})

#: Table functions that read files (allowed read-only, refused in the sandbox).
FILE_TABLE_FUNCTIONS = frozenset({
    "read_csv", "read_csv_auto", "read_single_csv_file", "sniff_csv", "read_json", "read_json_auto",
    "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
    "read_single_json_file", "read_parquet", "parquet_scan", "read_single_parquet_file", "parquet_metadata",
    "parquet_file_metadata", "parquet_full_metadata", "parquet_kv_metadata", "parquet_schema",
    "parquet_page_index", "parquet_bloom_probe", "read_text", "read_blob", "read_duckdb", "glob",
})  # fmt: skip

#: Table functions that only compute or describe (allowed in the sandbox too).
SANDBOX_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "repeat", "repeat_row", "json_each", "json_tree", "histogram",
    "histogram_values", "summary", "pg_timezone_names",
    "icu_calendar_names", "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies",
    "duckdb_functions", "duckdb_indexes", "duckdb_keywords", "duckdb_schemas", "duckdb_sequences",
    "duckdb_tables", "duckdb_types", "duckdb_views", "duckdb_settings", "duckdb_memory",
    "duckdb_temporary_files", "duckdb_optimizers", "duckdb_approx_database_count", "duckdb_extensions",
    "duckdb_variables", "duckdb_prepared_statements", "duckdb_available_metrics", "duckdb_secret_types",
    "duckdb_connection_count", "duckdb_coordinate_systems", "duckdb_dialects", "pragma_table_info",
    "pragma_storage_info", "pragma_database_size", "pragma_metadata_info", "pragma_version",
    "pragma_platform", "pragma_user_agent", "pragma_show", "pragma_collations",
})  # fmt: skip

#: Table functions a read-only query may call.
READ_ONLY_TABLE_FUNCTIONS = SANDBOX_TABLE_FUNCTIONS | FILE_TABLE_FUNCTIONS

#: Options of the file readers that write (rejected rows into tables of the connection).
_WRITING_OPTIONS = frozenset({"store_rejects", "rejects_table", "rejects_scan"})


class NotReadOnly(StoreError):
    """A statement that read-only SQL (or the sandbox) refuses."""


def check_read_only(query: str, *, sandbox: bool = False, relations: Collection[str] = ()) -> None:
    """Raise :class:`NotReadOnly` (a StoreError) naming the first statement of ``query`` that
    read-only SQL (``sandbox``: the sandbox, where only ``relations`` may be named) refuses; see
    the module docstring."""
    for st in _statements(query):
        reason = _refusal(st.query, statement_kind(st), sandbox, relations)
        if reason:
            rule = (
                "sandboxed SQL reads only the store and changes nothing"
                if sandbox
                else "ad-hoc SQL is read-only unless you pass write=True (CLI: --write)"
            )
            raise NotReadOnly(f"this statement is refused ({reason}): {_short(st.query)}; {rule}")


def statements(query: str) -> list:
    """The parsed statements of ``query``; an empty query or a syntax error is a StoreError."""
    return _statements(query)


def statement_kind(st: Any) -> str:
    """The kind of a parsed statement as DuckDB names it (``SELECT``, ``EXPLAIN``, ``COPY``, ...);
    ``UNKNOWN`` for a kind that this DuckDB's Python package cannot name (``UPDATE EXTENSIONS``
    in duckdb 2.0.1, whose type number the package's enumeration lacks)."""
    try:
        return str(st.type.name)
    except ValueError:
        return "UNKNOWN"


def _statements(query: str) -> list:
    if not isinstance(query, str):
        raise StoreError(f"an SQL query is a string, not {type(query).__name__}")
    if not query.strip():
        raise StoreError("empty SQL query")
    try:
        sts = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise StoreError(f"SQL error: {e}") from None
    if not sts:
        raise StoreError("empty SQL query (only comments or semicolons)")
    return sts


def _refusal(text: str, kind: str, sandbox: bool, relations: Collection[str]) -> str | None:
    """Why the statement ``text`` of DuckDB type ``kind`` is refused, or None."""
    if kind == "EXPLAIN":
        readings = _explained(text)
        if not readings:
            return "an EXPLAIN whose statement cannot be read"
        for inner in readings:
            for s in inner:
                reason = _refusal(s.query, statement_kind(s), sandbox, relations)
                if reason:
                    return reason
        return None
    if kind == "SELECT":
        return _tree_refusal(text, sandbox, relations)
    if kind == "PRAGMA":
        if _pragma_name(text) in DESCRIBING_PRAGMAS:
            return None
        return "a PRAGMA that is not a description (or COPY FROM DATABASE)"
    if kind == "COPY":
        return "COPY writes a file or a table; write a result with `evalstore sql -o FILE` instead"
    if kind == "UNKNOWN":
        return "a kind of statement this DuckDB package cannot name"
    return kind.replace("_", " ")


def _tokens(text: str) -> list[tuple[int, int, Any]]:
    """DuckDB's tokens of ``text``: ``(start, end, kind)``, ``end`` the start of the next token."""
    toks = duckdb.tokenize(text)
    return [(pos, toks[i + 1][0] if i + 1 < len(toks) else len(text), kind) for i, (pos, kind) in enumerate(toks)]


def _word(text: str, start: int, end: int) -> str:
    """The leading word of a token (a keyword or an unquoted identifier), lower case."""
    out = []
    for ch in text[start:end]:
        if not (ch.isalnum() or ch == "_"):
            break
        out.append(ch)
    return "".join(out).lower()


def _explained(text: str) -> list[list]:
    """The statements an ``EXPLAIN [ANALYZE]`` statement may explain, each reading parsed by
    DuckDB: the text after the keywords, and, when a parenthesised group follows them, also the
    text after the group's closing parenthesis (DuckDB takes the group as options or as a
    parenthesised query). A string literal is one token, so a ``)`` inside it closes nothing.
    Readings that do not parse are left out."""
    toks = _tokens(text)
    i = 1 if toks and _word(text, toks[0][0], toks[0][1]) == "explain" else len(toks)
    if i < len(toks) and _word(text, toks[i][0], toks[i][1]) in ("analyze", "analyse"):
        i += 1
    if i >= len(toks):
        return []
    starts = [toks[i][0]]
    if text[toks[i][0]] == "(" and toks[i][2] == duckdb.token_type.operator:
        depth = 0
        for j in range(i, len(toks)):
            start, _, kind = toks[j]
            if kind == duckdb.token_type.operator and text[start] in "()":
                depth += 1 if text[start] == "(" else -1
                if depth == 0:
                    if j + 1 < len(toks):
                        starts.append(toks[j + 1][0])
                    break
    readings = []
    for start in starts:
        try:
            sts = duckdb.extract_statements(text[start:])
        except duckdb.Error:
            continue
        if sts:
            readings.append(sts)
    return readings


def _pragma_name(text: str) -> str | None:
    """The name of a ``PRAGMA name`` or ``PRAGMA name(...)`` call (None for ``PRAGMA name = value``
    or anything else), read with DuckDB's tokenizer."""
    toks = _tokens(text)
    if len(toks) < 2 or _word(text, toks[0][0], toks[0][1]) != "pragma":
        return None
    name = _word(text, toks[1][0], toks[1][1])
    if len(toks) > 2:
        nxt = text[toks[2][0]]
        if not (toks[2][2] == duckdb.token_type.operator and nxt in "(;"):
            return None
    return name


def _tree_refusal(text: str, sandbox: bool, relations: Collection[str]) -> str | None:
    """Why a query's parse tree is refused: a function or table function it calls, a relation it
    names that is not the store's nor a common table expression in scope (sandbox), or a tree that
    cannot be read."""
    tree = _parse_tree(text)
    if tree is None:
        return "a query form whose parse tree cannot be checked (write it as a plain SELECT)"
    known = {r.lower() for r in relations}
    allowed = SANDBOX_TABLE_FUNCTIONS if sandbox else READ_ONLY_TABLE_FUNCTIONS
    for node, in_scope in _scoped_nodes(tree):
        kind = node.get("type")
        if node.get("class") == "FUNCTION" and "function_name" in node:
            name = str(node["function_name"]).lower()
            if name in REFUSED_FUNCTIONS:
                return f"{name}() changes the connection"
        if kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            name = str(fn.get("function_name", "")).lower()
            if name not in allowed:
                what = "reads files" if name in FILE_TABLE_FUNCTIONS else "is not an allowed table function"
                return f"{name}() {what}"
            for option in _named_arguments(fn):
                if option in _WRITING_OPTIONS:
                    return f"{name}(..., {option}=...) stores rejected rows"
        if sandbox and kind == "BASE_TABLE":
            name = str(node.get("table_name", ""))
            if name.lower() not in known and name.lower() not in in_scope:
                return f"{name!r} is not a relation of the store (a sandboxed query reads no file)"
    return None


def _parse_tree(text: str) -> dict | None:
    """DuckDB's parse tree of one SELECT statement as JSON, or None when it cannot be serialised."""
    global _parser
    with _parser_lock:
        if _parser is None:
            _parser = duckdb.connect(
                ":memory:",
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False, "threads": 1},
            )
        try:
            row = _parser.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
        except duckdb.Error:
            return None
    tree = json.loads(row[0]) if row else None
    if not isinstance(tree, dict) or tree.get("error"):
        return None
    return tree


_parser_lock = threading.Lock()
_parser: duckdb.DuckDBPyConnection | None = None


def _scoped_nodes(tree: Any) -> Iterator[tuple[dict, frozenset[str]]]:
    """Every object of a parse tree, depth first, with the names (lower case) of the common table
    expressions in scope there: those of the query nodes it is part of (a CTE's name names
    nothing outside its own query)."""
    stack: list[tuple[Any, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, dict):
            cte_map = node.get("cte_map")
            if isinstance(cte_map, dict):
                names = {str(e["key"]).lower() for e in cte_map.get("map") or [] if isinstance(e, dict) and "key" in e}
                scope = scope | names
            yield node, scope
            stack.extend((v, scope) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, scope) for v in node)


def _named_arguments(fn: dict) -> Iterator[str]:
    """The names of a table function's named arguments (``name := v`` and ``name = v``)."""
    for arg in fn.get("arguments") or []:
        if not isinstance(arg, dict):
            continue
        if arg.get("name"):
            yield str(arg["name"]).lower()
        expr = arg.get("expression") or {}
        left = expr.get("left") or {} if expr.get("type") == "COMPARE_EQUAL" else {}
        if left.get("class") == "COLUMN_REF" and left.get("column_names"):
            yield str(left["column_names"][-1]).lower()


def _short(text: str) -> str:
    t = " ".join(text.split())
    return repr(t if len(t) <= 80 else t[:77] + "...")

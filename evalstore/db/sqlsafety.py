"""What an ad-hoc SQL statement may do: the read-only rule and the sandbox rule, statement by statement.

**Read-only** is a promise about the store, the connection and the file system: a read-only
query changes nothing anywhere. It may read files (``read_csv('x.csv')``, ``FROM 'x.parquet'``)
but never writes one. Allowed:

* queries (``SELECT``, ``FROM ...``, ``WITH ... SELECT``, ``VALUES``, ``SHOW``, ``DESCRIBE``,
  ``SUMMARIZE``, ``UNPIVOT``) whose parse tree calls only allowed functions: every scalar and
  aggregate function except those that change state (:data:`REFUSED_FUNCTIONS`: ``nextval``,
  ``setval``, ``setseed``, ``write_log``), and only the table functions of
  :data:`READ_ONLY_TABLE_FUNCTIONS` (the ``duckdb_*`` catalogue, ``range``, ``unnest``, the file
  readers, ...; not ``checkpoint()``, ``enable_profiling()``, ``enable_logging()``, ``query()``, ...);
  the CSV reader's options that store rejected rows (``store_rejects``, ``rejects_table``,
  ``rejects_scan``) are refused;
* ``EXPLAIN`` and ``EXPLAIN ANALYZE`` of an allowed statement (``EXPLAIN ANALYZE`` runs it);
* ``PRAGMA`` calls that only describe (:data:`DESCRIBING_PRAGMAS`).

Everything else is refused: ``INSERT``, ``UPDATE``, ``DELETE``, ``CREATE``, ``DROP``, ``ALTER``,
``SET``, ``RESET``, ``PRAGMA x = y``, ``ATTACH``, ``DETACH``, ``USE``, ``INSTALL``, ``LOAD``,
``CALL``, ``CHECKPOINT``, ``VACUUM``, ``EXPORT``/``IMPORT DATABASE``, transactions, ``PIVOT``
(several statements), and **every** ``COPY``: ``COPY (query) TO 'file'`` writes a file, and its
options (``OVERWRITE``, ``PARTITION_BY``) can delete a folder. Write a result with the CLI's
``evalstore sql -o FILE`` (or ``store.sql(...).arrow()``) instead, or pass ``write=True``.

**Sandbox** (for untrusted queries) is read-only plus: no file is read either. The parse tree may
name only relations of the store (its tables, views and the common table expressions of the query
itself: no ``FROM 'file.csv'`` replacement scan), and only the table functions of
:data:`SANDBOX_TABLE_FUNCTIONS` (no file reader, no ``glob``, no ``read_blob`` of the store file).
DuckDB's own sandbox (``enable_external_access = false``, ``lock_configuration = true``; see
:mod:`.connection`) refuses file and network access underneath, but it allows the store file and
its temp directory, which this rule closes.

The check reads DuckDB's own parse tree (``json_serialize_sql``), so a quoted name
(``"checkpoint"()``), a schema-qualified one (``main.nextval``) or a call inside a lambda or a
subquery is seen as DuckDB sees it; a query form whose tree cannot be read is refused.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Collection, Iterator
from typing import Any

import duckdb

from ..errors import StoreError

_FORBIDDEN_KEYWORDS = {
    "insert", "update", "delete", "create", "drop", "alter", "attach", "detach", "copy", "export",
    "import", "install", "load", "set", "reset", "pragma", "call", "checkpoint", "vacuum", "truncate",
    "merge", "use", "begin", "commit", "rollback", "abort", "transaction", "grant", "revoke", "prepare",
    "execute", "deallocate",
}  # fmt: skip

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
    "histogram_values", "summary", "test_all_types", "test_vector_types", "pg_timezone_names",
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

_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.I)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+(\w+)\s*(\(|;|$)", re.I)


class NotReadOnly(StoreError):
    """A statement that read-only SQL (or the sandbox) refuses."""


def check_read_only(query: str, *, sandbox: bool = False, relations: Collection[str] = ()) -> None:
    """Raise :class:`NotReadOnly` (a StoreError) naming the first statement of ``query`` that
    read-only SQL (``sandbox``: the sandbox, where only ``relations`` may be named) refuses; see
    the module docstring."""
    for st in _statements(query):
        reason = _refusal(st.query, st.type.name, sandbox, relations)
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
        m = _EXPLAIN.match(text)
        inner = text[m.end() :] if m else ""
        if not inner.strip():
            return "an EXPLAIN whose statement cannot be read"
        inner_sts = _statements(inner)
        return next((r for s in inner_sts if (r := _refusal(s.query, s.type.name, sandbox, relations))), None)
    if kind == "SELECT":
        bad = _forbidden_keyword(text)
        if bad:
            return f"it contains {bad.upper()}, which can change the store"
        return _tree_refusal(text, sandbox, relations)
    if kind == "PRAGMA":
        m = _PRAGMA.match(text)
        if m and m.group(1).lower() in DESCRIBING_PRAGMAS:
            return None
        return "a PRAGMA that is not a description (or COPY FROM DATABASE)"
    if kind == "COPY":
        return "COPY writes a file or a table; write a result with `evalstore sql -o FILE` instead"
    return kind.replace("_", " ")


def _tree_refusal(text: str, sandbox: bool, relations: Collection[str]) -> str | None:
    """Why a query's parse tree is refused: a function or table function it calls, a relation it
    names that is not the store's (sandbox), or a tree that cannot be read."""
    tree = _parse_tree(text)
    if tree is None:
        return "a query form whose parse tree cannot be checked (write it as a plain SELECT)"
    ctes = {name.lower() for name in _cte_names(tree)}
    known = {r.lower() for r in relations} | ctes
    allowed = SANDBOX_TABLE_FUNCTIONS if sandbox else READ_ONLY_TABLE_FUNCTIONS
    for node in _nodes(tree):
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
            if name.lower() not in known:
                return f"{name!r} is not a relation of the store (a sandboxed query reads no file)"
    return None


def called_functions(query: str) -> set[str]:
    """The names (lower case) of every scalar, aggregate and table function the statements of
    ``query`` call, as DuckDB parses them (inside subqueries, lambdas and ``EXPLAIN`` too); a
    statement whose parse tree cannot be read is a :class:`NotReadOnly` error."""
    out: set[str] = set()
    for st in _statements(query):
        text, kind = st.query, st.type.name
        if kind == "EXPLAIN":
            m = _EXPLAIN.match(text)
            out |= called_functions(text[m.end() :] if m else "")
            continue
        if kind != "SELECT":
            continue
        tree = _parse_tree(text)
        if tree is None:
            raise NotReadOnly(f"this statement is refused (its parse tree cannot be checked): {_short(text)}")
        for node in _nodes(tree):
            if node.get("class") == "FUNCTION" and "function_name" in node:
                out.add(str(node["function_name"]).lower())
            if node.get("type") == "TABLE_FUNCTION":
                out.add(str((node.get("function") or {}).get("function_name", "")).lower())
    return out


_parser_lock = threading.Lock()
_parser: duckdb.DuckDBPyConnection | None = None


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


def _nodes(tree: Any) -> Iterator[dict]:
    """Every object of a parse tree, depth first."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


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


def _cte_names(tree: Any) -> Iterator[str]:
    for node in _nodes(tree):
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map") or []:
                if isinstance(entry, dict) and "key" in entry:
                    yield str(entry["key"])


def _forbidden_keyword(text: str) -> str | None:
    for pos, kind in duckdb.tokenize(text):
        if kind == duckdb.token_type.keyword:
            word = re.match(r"\w+", text[pos:])
            if word and word.group(0).lower() in _FORBIDDEN_KEYWORDS:
                return word.group(0)
    return None


def _short(text: str) -> str:
    t = " ".join(text.split())
    return repr(t if len(t) <= 80 else t[:77] + "...")

"""What an ad-hoc SQL statement may do: the read-only rule, statement by statement.

Read-only is a promise about the store and the connection: a statement that could change the
database, its settings, what is attached or loaded, or that runs a maintenance operation is
refused. Allowed:

* queries (``SELECT``, ``FROM ...``, ``WITH ... SELECT``, ``SHOW``, ``DESCRIBE``, ``SUMMARIZE``)
  whose keywords include none of the statements below (a data-modifying ``WITH`` is refused);
* ``EXPLAIN`` and ``EXPLAIN ANALYZE`` of an allowed statement (``EXPLAIN ANALYZE`` runs it);
* ``PRAGMA`` calls that only describe (``table_info``, ``show_tables``, ``database_size``,
  ``storage_info``, ``version``, ``database_list``, ``functions``, ``show``, ``metadata_info``);
* ``COPY (query) TO 'file' ...``: it writes a result file and does not touch the store (an
  allowed query inside). In sandbox mode DuckDB itself refuses every file and network access.

Everything else (``INSERT``, ``UPDATE``, ``DELETE``, ``CREATE``, ``DROP``, ``ALTER``, ``SET``,
``RESET``, ``PRAGMA x = y``, ``ATTACH``, ``DETACH``, ``USE``, ``INSTALL``, ``LOAD``, ``CALL``,
``CHECKPOINT``, ``VACUUM``, ``EXPORT``/``IMPORT DATABASE``, ``COPY ... FROM``, ``COPY FROM
DATABASE``, transactions) needs ``write=True`` (CLI ``--write``).
"""

from __future__ import annotations

import re

import duckdb

from ..errors import StoreError

_FORBIDDEN_KEYWORDS = {
    "insert", "update", "delete", "create", "drop", "alter", "attach", "detach", "copy", "export",
    "import", "install", "load", "set", "reset", "pragma", "call", "checkpoint", "vacuum", "truncate",
    "merge", "use", "begin", "commit", "rollback", "abort", "transaction", "grant", "revoke", "prepare",
    "execute", "deallocate",
}  # fmt: skip
_DESCRIBING_PRAGMAS = {
    "table_info", "show_tables", "show_tables_expanded", "database_size", "storage_info", "version",
    "database_list", "functions", "show", "metadata_info", "platform", "user_agent",
}  # fmt: skip
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.I)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+(\w+)\s*(\(|;|$)", re.I)
_COPY_TO = re.compile(r"^\s*COPY\s*\(", re.I)


class NotReadOnly(StoreError):
    """A statement that read-only SQL refuses."""


def check_read_only(query: str) -> None:
    """Raise :class:`NotReadOnly` (a StoreError) naming the first statement of ``query`` that
    read-only SQL refuses; see the module docstring."""
    for st in _statements(query):
        reason: str | None = _refusal(st.query, st.type.name)
        if reason:
            raise NotReadOnly(
                f"this statement would change the store or the connection ({reason}): {_short(st.query)}; "
                f"ad-hoc SQL is read-only unless you pass write=True (CLI: --write)"
            )


def statements(query: str) -> list:
    """The parsed statements of ``query``; an empty query or a syntax error is a StoreError."""
    return _statements(query)


def _statements(query: str) -> list:
    if not query or not query.strip():
        raise StoreError("empty SQL query")
    try:
        sts = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise StoreError(f"SQL error: {e}") from None
    if not sts:
        raise StoreError("empty SQL query (only comments or semicolons)")
    return sts


def _refusal(text: str, kind: str) -> str | None:
    """Why the statement ``text`` of DuckDB type ``kind`` is refused, or None."""
    if kind == "EXPLAIN":
        m = _EXPLAIN.match(text)
        inner = text[m.end() :] if m else ""
        if not inner.strip():
            return "an EXPLAIN whose statement cannot be read"
        inner_sts = _statements(inner)
        return next((r for s in inner_sts if (r := _refusal(s.query, s.type.name))), None)
    if kind == "SELECT":
        bad = _forbidden_keyword(text)
        return f"it contains {bad.upper()}, which can change the store" if bad else None
    if kind == "PRAGMA":
        m = _PRAGMA.match(text)
        if m and m.group(1).lower() in _DESCRIBING_PRAGMAS:
            return None
        return "a PRAGMA that is not a description (or COPY FROM DATABASE)"
    if kind == "COPY":
        if not _COPY_TO.match(text):
            return "COPY into a table or from a database"
        start = text.index("(")
        query = _parenthesised(text[start:])
        if query is None or not re.match(r"\s*TO\b", text[start + len(query) + 2 :], re.I):
            return "a COPY that is not COPY (query) TO 'file'"
        for st in _statements(query):
            why = _refusal(st.query, st.type.name)
            if why:
                return why
        return None
    return kind.replace("_", " ")


def _forbidden_keyword(text: str) -> str | None:
    for pos, kind in duckdb.tokenize(text):
        if kind == duckdb.token_type.keyword:
            word = re.match(r"\w+", text[pos:])
            if word and word.group(0).lower() in _FORBIDDEN_KEYWORDS:
                return word.group(0)
    return None


def _parenthesised(text: str) -> str | None:
    """The text inside the parenthesis ``text`` starts with (quotes respected)."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[1:i]
    return None


def _short(text: str) -> str:
    t = " ".join(text.split())
    return repr(t if len(t) <= 80 else t[:77] + "...")

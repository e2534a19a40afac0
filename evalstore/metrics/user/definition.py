"""A measure of one's own: its definition (an SQL block or a Python function), read and checked.

The simplest SQL definition is one SELECT over ``ranked(qrels, run, topic, doc, rank, score,
grade)`` returning ``qrels, run, topic, value`` (:mod:`.relations`). Leading comment lines may
declare, as a built-in family's blocks do (:mod:`evalstore.metrics.sqlfile`):

* ``-- reads: ranked, judgments`` the relations it reads (default: ``ranked``);
* ``-- needs: cnt, cg`` the running columns of ``rl_judged`` it names;
* ``-- cutoff: required`` (``optional``, ``none``; default ``optional`` when the SQL uses ``${k}``,
  the cutoff of ``NAME@k``, else ``none``);
* ``-- aggregate: mean`` (``gmean``, ``sum``);

every other leading comment line is its description. ``exact_sum(term)`` sums as the built-ins do.

**What a definition may do** is checked on DuckDB's own parse tree (``json_serialize_sql``), never on
the text: one SELECT statement; every relation it names is one it declares or a common table
expression in scope; the only table functions are ``range``, ``generate_series`` and ``unnest``;
no function that changes state. A definition that reads what it did not declare, names a store
table or a file, or is not a single SELECT is refused with a message. It then runs (:mod:`.sandbox`)
on a connection of its own that holds only the relations it declared, with external access off and
the configuration locked: what the check might miss, that connection cannot reach.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ...errors import MetricError
from ..sqlfile import ENGINE_VALUES, RUNNING_COLUMNS, SqlBlock, expand_exact_sums, strip_comments
from .relations import DEFAULT_READS, RELATIONS, query

CUTOFFS = ("none", "optional", "required")
AGGREGATES = ("mean", "gmean", "sum")
#: table functions a definition may call (they compute; none reads a file or the catalogue)
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
#: scalar functions that change the connection or write
REFUSED_FUNCTIONS = frozenset({"nextval", "setval", "setseed", "write_log", "currval"})
#: the key columns a definition returns (either spelling), then topic and value
KEY_SPELLINGS = (("qrels", "qrels_id"), ("run", "run_id"))
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_\-\.]*")
_DECL_RE = re.compile(r"^--\s*(reads|needs|params|cutoff|aggregate):\s*(.*)$")
_PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: the values the check renders a definition with (the engine's at run time differ only in literals)
SAMPLE_VALUES = {"k": "10", "has_cutoff": "TRUE", "depth": "1000", "gmax": "3.0::DOUBLE", "convention": "'trec_eval'"}


@dataclass(frozen=True)
class UserMeasure:
    """One measure of one's own. ``language``: ``sql`` (``body``: the SELECT, declarations removed)
    or ``python`` (``function``: Arrow tables of ``reads`` in, an Arrow table out). ``source``:
    where it was defined (``store``, ``python``, a file)."""

    name: str
    language: str
    reads: frozenset[str]
    cutoff: str = "none"
    aggregate: str = "mean"
    doc: str = ""
    text: str = ""  # the SQL as given (stored as is)
    body: str = ""
    needs: frozenset[str] = frozenset()
    function: Callable[..., Any] | None = field(default=None, compare=False)
    source: str = "python"
    #: how the SQL names the keys it returns (``qrels`` or ``qrels_id``, ``run`` or ``run_id``)
    keys: tuple[str, str] = ("qrels", "run")

    @property
    def sha256(self) -> str:
        """The definition's identity: scores computed by another definition are never reused."""
        if self.language == "sql":
            what = self.text
        else:
            fn = self.function
            try:
                what = inspect.getsource(fn)  # type: ignore[arg-type]
            except (OSError, TypeError):
                what = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
        head = json.dumps([self.language, sorted(self.reads), self.cutoff, self.aggregate])
        return hashlib.sha256((head + "\n" + what).encode("utf-8")).hexdigest()

    @property
    def block(self) -> SqlBlock:
        """The definition as a metric block (what the registry's readers of blocks look at)."""
        return SqlBlock(f"<measure {self.name}>", "metric", self.name, self.body, 1, self.reads, self.needs,
                        frozenset(_PLACEHOLDER_RE.findall(strip_comments(self.body))))  # fmt: skip

    def render(self, values: dict[str, str]) -> str:
        """The SQL with its placeholders filled (``values``: SQL literals, :data:`ENGINE_VALUES`)."""
        return string.Template(self.body).substitute(values)


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise MetricError(
            f"a measure's name starts with a letter and has letters, digits, '_', '-' and '.' only, not {name!r}"
        )
    return name


def sql_measure(name: str, text: str, source: str = "python") -> UserMeasure:
    """Read and check an SQL definition (see the module docstring); MetricError says what is wrong."""
    check_name(name)
    if not isinstance(text, str) or not text.strip():
        raise MetricError(f"measure {name}: the SQL is empty")
    decl, doc, body = _declarations(name, text)
    body = expand_exact_sums(body.strip().rstrip(";").strip())
    used = set(_PLACEHOLDER_RE.findall(strip_comments(body)))
    unknown = used - set(ENGINE_VALUES)
    if unknown:
        raise MetricError(
            f"measure {name}: unknown placeholder {', '.join('${' + u + '}' for u in sorted(unknown))} "
            f"(a measure's SQL may use {', '.join('${' + v + '}' for v in ENGINE_VALUES)})"
        )
    if "params" in decl and set(decl["params"]) != used:
        raise MetricError(f"measure {name}: declares params {', '.join(sorted(decl['params']))} but uses "
                          f"{', '.join(sorted(used)) or 'none'}")  # fmt: skip
    cutoff = _one(name, decl, "cutoff", CUTOFFS, "optional" if "k" in used else "none")
    if cutoff == "none" and "k" in used:
        raise MetricError(f"measure {name}: uses ${{k}} but declares cutoff: none")
    needs = frozenset(decl.get("needs", ()))
    bad = needs - set(RUNNING_COLUMNS)
    if bad:
        raise MetricError(
            f"measure {name}: unknown needs {', '.join(sorted(bad))} (known: {', '.join(RUNNING_COLUMNS)})"
        )
    reads = _reads(name, decl)
    if needs and "rl_judged" not in reads:
        raise MetricError(
            f"measure {name}: needs {', '.join(sorted(needs))} are columns of rl_judged, which it does not read"
        )
    m = UserMeasure(name, "sql", reads, cutoff, _one(name, decl, "aggregate", AGGREGATES, "mean"), doc, text, body,
                    needs, source=source)  # fmt: skip
    check_sql(m, m.render(SAMPLE_VALUES))
    return m


def python_measure(
    name: str,
    function: Callable[..., Any],
    *,
    reads: str | tuple[str, ...] | list[str] = ("ranked",),
    cutoff: str = "none",
    aggregate: str = "mean",
    doc: str = "",
) -> UserMeasure:
    """A measure computed by ``function(ranked, [judgments=...], [k=...])``: the declared relations
    as Arrow tables (the first positionally, the others by name; ``k``: the cutoff, or None, when
    ``cutoff`` is not ``none``), returning an Arrow table (or a DataFrame) ``qrels, run, topic, value``."""
    check_name(name)
    if not callable(function):
        raise MetricError(f"measure {name}: python= takes a function, not {type(function).__name__}")
    decl = {"reads": [reads] if isinstance(reads, str) else list(reads), "cutoff": [cutoff], "aggregate": [aggregate]}
    return UserMeasure(
        name,
        "python",
        _reads(name, decl),
        _one(name, decl, "cutoff", CUTOFFS, "none"),
        _one(name, decl, "aggregate", AGGREGATES, "mean"),
        doc or (inspect.getdoc(function) or "").split("\n\n")[0],
        function=function,
        source="python",
    )


def _declarations(name: str, text: str) -> tuple[dict[str, list[str]], str, str]:
    """The declarations and the description of the leading comment lines, and the SQL after them."""
    lines = text.splitlines()
    decl: dict[str, list[str]] = {}
    doc: list[str] = []
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("--")):
        line = lines[i].strip()
        m = _DECL_RE.match(line)
        if m:
            if m.group(1) in decl:
                raise MetricError(f"measure {name}: declares '{m.group(1)}' twice")
            decl[m.group(1)] = [x.strip() for x in m.group(2).split(",") if x.strip() and x.strip() != "none"]
            if m.group(1) in ("cutoff", "aggregate") and not decl[m.group(1)]:
                decl[m.group(1)] = ["none"]
        elif line.startswith("--"):
            doc.append(line[2:].strip())
        i += 1
    if i == len(lines):
        raise MetricError(f"measure {name}: no SQL after the comment lines")
    return decl, " ".join(d for d in doc if d), "\n".join(lines[i:])


def _one(name: str, decl: dict[str, list[str]], key: str, choices: tuple[str, ...], default: str) -> str:
    values = decl.get(key) or [default]
    if len(values) != 1 or values[0] not in choices:
        raise MetricError(f"measure {name}: {key} is one of {', '.join(choices)}, not {', '.join(values)}")
    return values[0]


def _reads(name: str, decl: dict[str, list[str]]) -> frozenset[str]:
    reads = frozenset(r.lower() for r in decl["reads"]) if decl.get("reads") else DEFAULT_READS
    unknown = reads - set(RELATIONS)
    if unknown:
        raise MetricError(
            f"measure {name}: cannot read {', '.join(sorted(unknown))}; a measure reads {', '.join(RELATIONS)}"
        )
    return reads


# ------------------------------------------------------------------------------------------------ the check
_parser: duckdb.DuckDBPyConnection | None = None


def _tree(sql: str) -> dict:
    """DuckDB's parse tree of ``sql`` (one SELECT statement), or MetricError."""
    global _parser
    if _parser is None:
        _parser = duckdb.connect(":memory:", config={"enable_external_access": False, "threads": 1,
                                                     "autoload_known_extensions": False})  # fmt: skip
    try:
        statements = _parser.extract_statements(sql)
    except duckdb.Error as e:
        raise MetricError(f"DuckDB cannot parse it: {str(e).splitlines()[0]}") from None
    if len(statements) != 1 or statements[0].type.name != "SELECT":
        kinds = ", ".join(s.type.name for s in statements) or "nothing"
        raise MetricError(f"a measure is one SELECT statement, and this is {kinds}")
    row = _parser.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
    tree = json.loads(row[0]) if row else None
    if not isinstance(tree, dict) or tree.get("error"):
        raise MetricError("its parse tree cannot be read (write it as a plain SELECT)")
    return tree


def referenced(sql: str) -> tuple[set[str], set[str], set[str]]:
    """``(relations, table functions, functions)`` that the SELECT ``sql`` names, as DuckDB parses it:
    relations outside the common table expressions in scope where they are named (a relation named
    with a schema or catalogue is given with it, ``main.x``)."""
    relations: set[str] = set()
    table_functions: set[str] = set()
    functions: set[str] = set()
    for node, scope in _walk(_tree(sql), frozenset()):
        kind = node.get("type")
        if kind == "BASE_TABLE":
            qualified = ".".join(p for p in (node.get("catalog_name"), node.get("schema_name")) if p)
            table = str(node.get("table_name", ""))
            if qualified:
                relations.add(f"{qualified}.{table}")
            elif table.lower() not in scope:
                relations.add(table.lower())
        elif kind == "TABLE_FUNCTION":
            table_functions.add(str((node.get("function") or {}).get("function_name", "")).lower())
        if node.get("class") == "FUNCTION" and "function_name" in node:
            functions.add(str(node["function_name"]).lower())
    return relations, table_functions, functions


def _walk(node: Any, scope: frozenset[str]) -> Iterator[tuple[dict, frozenset[str]]]:
    """Every object of a parse tree with the names of the common table expressions in scope there
    (those of every enclosing query, and of the query itself in its own CTEs: a recursive one)."""
    stack = [(node, scope)]
    while stack:
        item, names = stack.pop()
        if isinstance(item, dict):
            cte_map = item.get("cte_map")
            if isinstance(cte_map, dict):
                names = names | {str(e["key"]).lower() for e in cte_map.get("map") or [] if isinstance(e, dict)}
            yield item, names
            stack.extend((v, names) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, names) for v in item)


def check_sql(measure: UserMeasure, sql: str) -> None:
    """Refuse (MetricError) what ``sql``, the rendered definition of ``measure``, may not do (see the
    module docstring)."""
    name = measure.name
    try:
        relations, table_functions, functions = referenced(sql)
    except MetricError as e:
        raise MetricError(f"measure {name}: {e}") from None
    for rel in sorted(relations):
        if rel in measure.reads:
            continue
        if rel in RELATIONS:
            raise MetricError(
                f"measure {name}: reads {rel}, which it does not declare; add it to its declaration: "
                f"-- reads: {', '.join(sorted(measure.reads | {rel}))}"
            )
        raise MetricError(
            f"measure {name}: reads {rel!r}, which is not a relation a measure may read ({', '.join(RELATIONS)}; "
            "declared with -- reads:)"
        )
    unused = measure.reads - relations
    if unused:
        raise MetricError(f"measure {name}: declares reads {', '.join(sorted(unused))} but does not read it")
    bad = table_functions - TABLE_FUNCTIONS
    if bad:
        raise MetricError(
            f"measure {name}: calls the table function {', '.join(sorted(bad))}; a measure may call "
            f"{', '.join(sorted(TABLE_FUNCTIONS))} only"
        )
    bad = functions & REFUSED_FUNCTIONS
    if bad:
        raise MetricError(f"measure {name}: calls {', '.join(sorted(bad))}, which changes state")


def inline_sql(measure: UserMeasure, values: dict[str, str]) -> str:
    """An SQL definition as a block over the ranked list's relations (``qrels_id, run_id, topic,
    value``), its relations ``ranked`` and ``judgments`` as common table expressions: for an engine
    without the sandbox's connection (Spark), checked again as rendered."""
    sql = measure.render(values)
    check_sql(measure, sql)
    made = [f"{r} AS ({query(r)})" for r in sorted(measure.reads) if r in ("ranked", "judgments")]
    head = f"WITH {', '.join(made)} " if made else ""
    q, r = measure.keys
    return f"{head}SELECT {q} AS qrels_id, {r} AS run_id, topic, value FROM (\n{sql}\n) own"

"""The metric SQL files of ``sql/``: blocks with declared signatures, parsed and rendered.

A family file holds a header comment (formulas and sources), then blocks::

    -- @fragment first_relevant          a piece of SQL (CTEs) shared by blocks of the same file,
    -- reads: rl_judged, qrels_meta      included in a block as ${first_relevant}
    -- needs: cnt
    -- params: k
    lv AS (...), first AS (...)

    -- @metric WRR                       one metric: a SELECT returning (qrels_id, run_id, topic, value)
    -- reads: rl_judged
    -- params: penalties, first_relevant
    WITH ${first_relevant} SELECT ...

The declarations say what a block uses, so that the engine builds only that and a test can check
the SQL against the registry:

* ``reads``: the relations it reads: the ranked judged list (``rl_judged``, ``rl_topics``,
  ``rl_ideal``, ``rl_qrels``, ``rl_qtopics``, ``rl_retrieved``, ``rl_subtopics``: the last built only
  when a block reads it; see ``sql/ranked_list.sql``), the judged lists of generated answers
  (``rl_nuggets``, ``rl_citations``: a block reading one evaluates answers against nugget
  assignments or support labels; see ``sql/answer_lists.sql``) and
  store tables (``qrels_meta``, ``subsample_meta``, ``run_meta``);
* ``needs``: the optional columns of ``rl_judged`` it names (``cnt``, ``cg``, ``jrank``,
  ``cg_ideal``, ``gain_ideal``: each costs a window or a join, so only those named are built), and
  ``pool`` when it reads the pooled-but-unjudged rows (grade < 0) that a subsample adds for infAP;
* ``params``: the ``${placeholders}`` it uses: the metric's parameters, the values the engine
  supplies (:data:`ENGINE_VALUES`) and the fragments it includes;
* ``udfs``: the Python functions it calls (they exist on DuckDB connections opened by evalstore,
  not in other engines);
* ``explain``: the block's per-rank relation, a CTE whose rows the block sums into its value and
  that ``evalstore explain`` prints (:mod:`evalstore.explain.explanation`): ``-- explain: terms`` names the
  CTE (columns ``qrels_id, run_id, topic, doc, rank, grade, gain, discount, contribution``, an
  optional ``norm``, the value being ``sum(contribution) / norm``, and any further columns that
  explain a term), ``ideal=NAME`` a CTE of the ideal list's terms (``qrels_id, topic, rank, gain,
  discount, contribution``) and ``running=max`` a value that is the largest term rather than the
  sum (RR).

Sums of per-document terms are written ``exact_sum(term)``: the block's SQL then takes the sum
exactly, ``CAST(sum(CAST(term AS DECIMAL(38, 24))) AS DOUBLE)`` (each term converted to 24
decimals, within about 1e-17 of its value, added as integers, rounded to a double once; not
always the correctly rounded sum of the doubles, which :mod:`evalstore.base.aggregate` computes for
means, but a function of the terms alone), so a score is the same to the last bit however DuckDB
splits the rows among its threads (floating-point addition is not associative: a
plain ``sum`` over doubles differed in the last bit between two identical evaluations). A
filtered sum is ``exact_sum(CASE WHEN condition THEN term END)``; Spark SQL runs the same
expansion.

A block is rendered with only the fragments it includes. :func:`problems` compares each
declaration with the SQL text (comments removed); ``tests/evalstore/metrics/test_registry.py`` runs it for every
file and fails on any disagreement.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..base.resources import read_sql

#: The optional columns of rl_judged (name -> SQL over ranked k, rl_ideal i, window w).
RUNNING_COLUMNS: dict[str, str] = {
    "cnt": "sum(k.isrel) OVER w",
    "cg": "sum(k.gain) OVER w",
    "jrank": "sum(CASE WHEN k.judged THEN 1 ELSE 0 END) OVER w",
    "cg_ideal": "coalesce(i.icg, t.ideal_total)",
    "gain_ideal": "coalesce(i.gain, 0)",
}
#: Relations a block may read: the ranked judged list and store tables.
RELATIONS = (
    "rl_judged",
    "rl_topics",
    "rl_ideal",
    "rl_qrels",
    "rl_qtopics",
    "rl_retrieved",
    "rl_subtopics",
    "rl_nuggets",
    "rl_citations",
    "qrels_meta",
    "subsample_meta",
    "run_meta",
)
#: Needs that the SQL text cannot show (checked by tests of their own).
SEMANTIC_NEEDS = ("pool",)
#: Placeholders the engine fills for every block (beside the metric's parameters).
ENGINE_VALUES = ("k", "has_cutoff", "depth", "gmax", "convention")

_BLOCK_RE = re.compile(r"^--\s*@(metric|fragment)\s+(\S+)\s*$", re.M)
_DECL_RE = re.compile(r"^--\s*(reads|needs|params|udfs|explain):\s*(.*)$")
_PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CALL_RE = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


@dataclass(frozen=True)
class SqlBlock:
    """One ``-- @metric`` or ``-- @fragment`` block with its declarations."""

    file: str
    kind: str  # 'metric' or 'fragment'
    name: str
    body: str  # the SQL, declarations removed
    line: int  # 1-based line of the '-- @...' marker
    reads: frozenset[str] = frozenset()
    needs: frozenset[str] = frozenset()
    params: frozenset[str] = frozenset()
    udfs: frozenset[str] = frozenset()
    explain: frozenset[str] = frozenset()

    @property
    def where(self) -> str:
        return f"sql/{self.file}:{self.line} ({self.kind} {self.name})"

    def code(self) -> str:
        """The SQL without comments (what the checks look at)."""
        return strip_comments(self.body)

    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER_RE.findall(self.code()))

    @property
    def explanation(self) -> Explain | None:
        """The ``-- explain:`` declaration (None when the block has none)."""
        if not self.explain:
            return None
        plain = sorted(x for x in self.explain if "=" not in x)
        keyed = dict(x.split("=", 1) for x in self.explain if "=" in x)
        if len(plain) != 1 or set(keyed) - {"ideal", "running"}:
            raise ValueError(f"{self.where}: write '-- explain: RELATION[, ideal=RELATION][, running=sum|max]'")
        return Explain(plain[0], keyed.get("ideal"), keyed.get("running", "sum"))


@dataclass(frozen=True)
class Explain:
    """A block's ``-- explain:`` declaration: its per-rank relation (a CTE), the CTE of the ideal
    list's terms if it has one, and how the terms make the value (``sum``, or ``max`` for RR)."""

    relation: str
    ideal: str | None = None
    running: str = "sum"


@dataclass
class SqlFile:
    name: str
    header: str
    metrics: dict[str, SqlBlock] = field(default_factory=dict)
    fragments: dict[str, SqlBlock] = field(default_factory=dict)

    def block(self, name: str) -> SqlBlock:
        if name not in self.metrics:
            raise KeyError(f"sql/{self.name} has no block '-- @metric {name}'")
        return self.metrics[name]

    def included(self, block: SqlBlock) -> list[SqlBlock]:
        """The fragments a block includes (directly or through other fragments), in include order."""
        out: list[SqlBlock] = []
        todo = [block]
        while todo:
            b = todo.pop()
            for name in sorted(b.placeholders() & set(self.fragments)):
                frag = self.fragments[name]
                if frag not in out:
                    out.append(frag)
                    todo.append(frag)
        return out

    def effective(self, block: SqlBlock) -> SqlBlock:
        """The block's declarations together with those of the fragments it includes."""
        parts = [block, *self.included(block)]
        return SqlBlock(
            block.file,
            block.kind,
            block.name,
            block.body,
            block.line,
            frozenset().union(*(p.reads for p in parts)),
            frozenset().union(*(p.needs for p in parts)),
            frozenset().union(*(p.params for p in parts)) - set(self.fragments),
            frozenset().union(*(p.udfs for p in parts)),
            block.explain,
        )

    def render(self, name: str, values: dict[str, str]) -> str:
        """The SQL of metric block ``name`` with its placeholders filled from ``values`` (SQL
        literals) and the fragments it includes."""
        block = self.block(name)
        filled = dict(values)
        for frag in reversed(self.included(block)):  # innermost first
            filled[frag.name] = string.Template(frag.body).substitute(filled)
        return string.Template(block.body).substitute(filled)


def strip_comments(sql: str) -> str:
    """SQL without ``--`` line comments and ``/* */`` comments (string literals are kept)."""
    out, i, n = [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'":
            j = i + 1
            while j < n and not (sql[j] == "'" and not (j + 1 < n and sql[j + 1] == "'")):
                j += 2 if sql[j] == "'" else 1
            out.append(sql[i : j + 1])
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


EXACT_SUM = "exact_sum("
#: What ``exact_sum(term)`` stands for (see the module docstring).
EXACT_SUM_SQL = "CAST(sum(CAST({term} AS DECIMAL(38, 24))) AS DOUBLE)"


def expand_exact_sums(sql: str) -> str:
    """``sql`` with every ``exact_sum(term)`` written out (:data:`EXACT_SUM_SQL`)."""
    out, pos = [], 0
    while (start := sql.find(EXACT_SUM, pos)) >= 0:
        depth, i = 0, start + len(EXACT_SUM) - 1
        while True:
            if sql[i] == "(":
                depth += 1
            elif sql[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        term = expand_exact_sums(sql[start + len(EXACT_SUM) : i])
        out += [sql[pos:start], EXACT_SUM_SQL.format(term=term)]
        pos = i + 1
    out.append(sql[pos:])
    return "".join(out)


def parse_sql_file(text: str, name: str) -> SqlFile:
    """Parse the text of a family file (see the module docstring)."""
    marks = list(_BLOCK_RE.finditer(text))
    header = text[: marks[0].start()] if marks else text
    out = SqlFile(name, header)
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        lines = text[m.end() : end].strip("\n").splitlines()
        decl: dict[str, frozenset[str]] = {}
        while lines and (d := _DECL_RE.match(lines[0].strip())):
            items = [x.strip() for x in d.group(2).split(",") if x.strip() and x.strip() != "none"]
            if d.group(1) in decl:
                raise ValueError(f"sql/{name}: block {m.group(2)} declares '{d.group(1)}' twice")
            decl[d.group(1)] = frozenset(items)
            lines.pop(0)
        body = expand_exact_sums("\n".join(lines).strip().rstrip(";").strip())
        block = SqlBlock(name, m.group(1), m.group(2), body, text.count("\n", 0, m.start()) + 1, **decl)
        target = out.metrics if block.kind == "metric" else out.fragments
        if block.name in target:
            raise ValueError(f"sql/{name}: two blocks named {block.name}")
        target[block.name] = block
    return out


@cache
def load(name: str) -> SqlFile:
    """The parsed family file ``sql/<name>`` (cached)."""
    return parse_sql_file(read_sql(name), name)


@cache
def effective_block(filename: str, name: str) -> SqlBlock:
    """:meth:`SqlFile.effective` of block ``name`` of the family file ``sql/<filename>`` (cached: a
    metric's block is read on every evaluation call, for its notes and its kind)."""
    f = load(filename)
    return f.effective(f.block(name))


def _named(code: str, names: tuple[str, ...] | list[str]) -> set[str]:
    return {c for c in names if re.search(rf"\b{re.escape(c)}\b", code)}


def problems(f: SqlFile, udf_names: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Every disagreement between a block's declarations and its SQL text.

    ``udf_names``: the names of evalstore's Python SQL functions (calls of those must be declared)."""
    out: list[str] = []
    allowed_needs = set(RUNNING_COLUMNS) | set(SEMANTIC_NEEDS)
    for b in [*f.fragments.values(), *f.metrics.values()]:
        code = b.code()

        def diff(what: str, declared: frozenset[str], used: set[str], b: SqlBlock = b) -> None:
            if declared - used:
                out.append(f"{b.where}: declares {what} {', '.join(sorted(declared - used))} but does not use it")
            if used - declared:
                out.append(f"{b.where}: uses {what} {', '.join(sorted(used - declared))} but does not declare it")

        diff("reads", b.reads, _named(code, RELATIONS))
        unknown = b.needs - allowed_needs
        if unknown:
            known = ", ".join(sorted(allowed_needs))
            out.append(f"{b.where}: unknown needs {', '.join(sorted(unknown))} (known: {known})")
        diff("needs", b.needs & set(RUNNING_COLUMNS), _named(code, list(RUNNING_COLUMNS)))
        diff("params", b.params, b.placeholders())
        diff("udfs", b.udfs, {c for c in _CALL_RE.findall(code) if c in udf_names})
        if b.explain:
            out.extend(_explain_problems(f, b))
        if b.kind == "metric" and not f.effective(b).reads & {
            "rl_judged",
            "rl_topics",
            "rl_ideal",
            "rl_qrels",
            "rl_subtopics",
            "rl_nuggets",
            "rl_citations",
        }:
            out.append(f"{b.where}: reads no relation of a judged list (ranked list or answers)")
    return out


def _explain_problems(f: SqlFile, b: SqlBlock) -> list[str]:
    """An ``-- explain:`` declaration names CTEs the block (or a fragment it includes) defines and reads."""
    if b.kind != "metric":
        return [f"{b.where}: only a metric block can declare explain"]
    try:
        decl = b.explanation
    except ValueError as e:
        return [str(e)]
    assert decl is not None
    code = " ".join(p.code() for p in [b, *f.included(b)])
    out = []
    for name in (decl.relation, decl.ideal):
        if name is None:
            continue
        if not re.search(rf"\b{re.escape(name)}\s+AS\s*\(", code):
            out.append(f"{b.where}: declares explain {name} but defines no CTE {name}")
        elif len(re.findall(rf"\b{re.escape(name)}\b", code)) < 2:
            out.append(f"{b.where}: defines the CTE {name} of its explain declaration but does not read it")
    if decl.running not in ("sum", "max"):
        out.append(f"{b.where}: explain running={decl.running}: use sum or max")
    return out


def literal(v: Any) -> str:
    """A Python value (validated by the registry) as an SQL literal."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            raise ValueError("NaN cannot be a metric parameter")
        if v in (float("inf"), float("-inf")):
            return "'inf'::DOUBLE" if v > 0 else "'-inf'::DOUBLE"
        return repr(v) + "::DOUBLE"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    return "'" + str(v).replace("'", "''") + "'"

"""Fusion in DuckDB: ``sql/fusion.sql`` rendered with a recipe's expressions and run over the
stored rows of the input runs, for all topics, and for one fusion or many at once (the grid of
``--optimize``: one candidate per point, told apart by ``cand``).

:class:`FusionWork` owns the temporary tables of one call (the inputs, the candidates, the output)
and drops them when its ``with`` block ends. Values reach the SQL through those tables; the text
gets only registry expressions and checked integers (depth, top).
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from ..base.resources import sql_blocks
from ..errors import FusionError
from .recipe import Recipe
from .registry import RANKS

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: "All" as a number of documents in the SQL (depth, top).
ALL = 1 << 62
_serial = itertools.count(1)


def combine_macros(n_runs: int) -> dict[str, str]:
    """The combinations a method's ``combine`` may name (registry.py's module docstring), over the
    contributions ``v_1 .. v_n`` of the runs (NULL: the run has nothing for the document) and their
    weights ``w_1 .. w_n``. A sum adds the runs' terms in the order of the runs, 0 for a run without
    the document, as ranx's ``sum([...])`` does: the same double on any number of threads."""
    runs = range(1, n_runs + 1)

    def joined(terms) -> str:
        return "(" + " + ".join(terms) + ")"

    count = joined(f"CAST(v_{i} IS NOT NULL AS INTEGER)" for i in runs)
    values = "list_sort([" + ", ".join(f"v_{i}" for i in runs) + "], 'ASC', 'NULLS LAST')"
    return {
        "sum": joined(f"coalesce(v_{i}, 0)" for i in runs),
        "wsum": joined(f"coalesce(w_{i} * v_{i}, 0)" for i in runs),
        "sum_w": joined(f"CASE WHEN v_{i} IS NOT NULL THEN w_{i} ELSE 0 END" for i in runs),
        "count": count,
        "max": "greatest(" + ", ".join(f"v_{i}" for i in runs) + ")",
        "min": "least(" + ", ".join(f"v_{i}" for i in runs) + ")",
        # numpy's median: the middle value, or the mean of the two middle values (of the present ones)
        "median": f"(CASE WHEN {count} % 2 = 1 THEN {values}[{count} // 2 + 1] "
        f"ELSE ({values}[{count} // 2] + {values}[{count} // 2 + 1]) / 2 END)",
    }


@dataclass(frozen=True)
class Input:
    """An input run as it was when fused."""

    pos: int
    run_id: int
    name: str
    sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.name, "sha256": self.sha256}


def blocks() -> dict[str, str]:
    """The blocks of ``sql/fusion.sql`` (``-- @block NAME`` starts one), comment lines dropped."""
    return sql_blocks("fusion.sql")


def _base_values(recipe: Recipe, inputs: str, docs: str) -> dict[str, str]:
    return {
        "inputs": inputs,
        "docs": docs,
        "rank_column": "submitted_rank" if recipe.ranks == "submitted" else "rank",
        "depth": str(int(recipe.depth) if recipe.depth is not None else ALL),
        "norm": recipe.norm.expr,
        "norm_missing": recipe.norm.missing,
    }


def render_docs(recipe: Recipe, inputs: str, docs: str) -> str:
    """The statement that numbers the candidates into the temporary table ``docs``."""
    query = string.Template(blocks()["docs"]).substitute(_base_values(recipe, inputs, docs))
    return f"CREATE OR REPLACE TEMP TABLE {docs} AS\n{query}"


def render(recipe: Recipe, inputs: str, docs: str, candidates: str, out: str) -> str:
    """The statement that fills the temporary table ``out`` (cand, tid, did, score, rank)."""
    b = blocks()
    m = recipe.method
    n_runs = len(recipe.runs)
    params = [p.name for p in m.params]
    values = _base_values(recipe, inputs, docs)
    run_columns = ",\n".join(string.Template(b["run_columns"]).substitute(i=i) for i in range(1, n_runs + 1))

    def per_run(expr: str, i: int) -> str:
        return string.Template(expr).substitute(
            {"s": f"x.s_{i}", "p": f"x.p_{i}", "n": f"x.n_{i}"}, **{p: f"cd.{p}" for p in params}
        )

    contributions = ",\n".join(
        f"CASE WHEN x.k_{i} THEN ({per_run(m.value, i)}) ELSE ({per_run(m.missing, i)}) END AS v_{i}"
        for i in range(1, n_runs + 1)
    )
    values.update(
        candidates=candidates,
        run_columns=run_columns,
        values=contributions,
        params="".join(f", cd.w_{i}" for i in range(1, n_runs + 1)) + "".join(f", cd.{p}" for p in params),
        combine=string.Template(m.combine).substitute(combine_macros(n_runs), **{p: p for p in params}),
        top=str(int(recipe.top) if recipe.top is not None else ALL),
    )
    normalized = string.Template(b["normalized"]).substitute(values)
    fused = string.Template(b["fused"]).substitute(values)
    return f"CREATE OR REPLACE TEMP TABLE {out} AS\nWITH {normalized}\n{fused}"


def render_normalized(recipe: Recipe, inputs: str, docs: str) -> str:
    """The query of the normalised scores of the input runs (pos, topic, doc, counted, s)."""
    ctes = string.Template(blocks()["normalized"]).substitute(_base_values(recipe, inputs, docs))
    return f"WITH {ctes}\nSELECT g.pos, d.topic, d.doc, g.counted, g.s FROM normalized g JOIN {docs} d ON d.did = g.did"


class FusionWork:
    """The temporary tables of one fusion call (dropped at the end of the ``with`` block)."""

    def __init__(self, store: StoreHandle) -> None:
        self.store = store
        self.con: duckdb.DuckDBPyConnection = store.con
        k = next(_serial)
        self.inputs_table, self.cands_table, self.out = f"_fusion_inputs_{k}", f"_fusion_cands_{k}", f"_fusion_out_{k}"
        self.docs = f"_fusion_docs_{k}"
        self.inputs: list[Input] = []

    def __enter__(self) -> FusionWork:
        return self

    def __exit__(self, *exc: object) -> None:
        for t in (self.inputs_table, self.cands_table, self.out, self.docs):
            try:
                self.con.execute(f"DROP TABLE IF EXISTS {t}")
            except duckdb.Error:  # an aborted transaction: the tables go with it
                pass

    def load_inputs(self, recipe: Recipe) -> list[Input]:
        """Look the input runs up (closest names in the error) and check they can be fused so."""
        ids = [self.store.run_id(name) for name in recipe.runs]
        rows = dict(
            (r[0], r[1:])
            for r in self.con.execute(
                "SELECT run_id, name, sha256 FROM run_meta WHERE run_id IN (SELECT unnest(?))", [ids]
            ).fetchall()
        )
        self.inputs = [Input(pos, i, rows[i][0], rows[i][1]) for pos, i in enumerate(ids, 1)]
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {self.inputs_table} (pos INTEGER, run_id INTEGER)")
        self.con.execute(
            f"INSERT INTO {self.inputs_table} SELECT unnest(?), unnest(?)",
            [[i.pos for i in self.inputs], [i.run_id for i in self.inputs]],
        )
        self._check(recipe)
        return self.inputs

    def _check(self, recipe: Recipe) -> None:
        scores = recipe.method.reads != RANKS and recipe.norm.needs_scores
        if recipe.ranks == "submitted":
            self._refuse(
                "submitted_rank IS NULL OR submitted_rank < 1",
                "has no rank column as written, or a rank below 1 (ranks as written must count from 1); "
                "fuse by the evaluation ranks (the default)",
            )
        if scores:
            self._refuse(
                "score IS NULL OR NOT isfinite(score)",
                f"has rows without a finite score (an NTCIR res run has none); {recipe.method.name} with "
                f"{recipe.norm.name} reads scores: fuse it by rank (rrf, isr, bordafuse, ...) or with --norm rank",
            )

    def _refuse(self, condition: str, why: str) -> None:
        bad = self.con.execute(
            f"""SELECT m.name FROM {self.inputs_table} i JOIN run_meta m USING (run_id)
                WHERE EXISTS (SELECT 1 FROM run_row_data r WHERE r.run_id = i.run_id AND ({condition}))
                ORDER BY i.pos LIMIT 1"""
        ).fetchall()
        if bad:
            raise FusionError(f"the run {bad[0][0]!r} {why}")

    def number_docs(self, recipe: Recipe) -> None:
        """Number the candidates (the documents of the input runs, within depth) into ``self.docs``."""
        self.con.execute(render_docs(recipe, self.inputs_table, self.docs))

    def fuse(self, recipe: Recipe, candidates: Sequence[Mapping[str, Any]]) -> str:
        """Fuse the inputs once per candidate (``{"params": {...}, "weights": (...)}``, the recipe's
        own values where a candidate gives none) into the output table (cand, tid, did, score,
        rank; :meth:`rows` names the documents); returns its name."""
        params = [p.name for p in recipe.method.params]
        n_runs = len(self.inputs)
        cols: dict[str, list] = {"cand": [], **{f"w_{i}": [] for i in range(1, n_runs + 1)}, **{p: [] for p in params}}
        for c, cand in enumerate(candidates):
            chosen = {**recipe.params, **cand.get("params", {})}
            weights = cand.get("weights") or recipe.weights or [1.0] * n_runs
            cols["cand"].append(c)
            for i in range(1, n_runs + 1):
                cols[f"w_{i}"].append(float(weights[i - 1]))
            for p in params:
                cols[p].append(float(chosen[p]))
        typed = ", ".join(["cand INTEGER", *(f"{name} DOUBLE" for name in list(cols)[1:])])
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {self.cands_table} ({typed})")
        self.con.execute(
            f"INSERT INTO {self.cands_table} SELECT {', '.join(f'unnest(${k + 1})' for k in range(len(cols)))}",
            list(cols.values()),
        )
        self.number_docs(recipe)
        self.con.execute(render(recipe, self.inputs_table, self.docs, self.cands_table, self.out))
        bad = self.con.execute(
            f"SELECT d.topic, d.doc, o.score FROM {self.out} o JOIN {self.docs} d ON d.did = o.did "
            "WHERE NOT isfinite(o.score) LIMIT 1"
        ).fetchall()
        if bad:
            raise FusionError(
                f"{recipe.method.name} gave the document {bad[0][1]!r} of topic {bad[0][0]!r} the score {bad[0][2]}; "
                f"check the parameters and the input scores"
            )
        return self.out

    def rows(self, cand: int | None = None) -> str:
        """The fusions as ``cand, topic, doc, score, rank`` (one candidate, or all)."""
        where = "" if cand is None else f" WHERE o.cand = {int(cand)}"
        return (
            f"SELECT o.cand, d.topic, d.doc, o.score, o.rank FROM {self.out} o "
            f"JOIN {self.docs} d ON d.did = o.did{where}"
        )

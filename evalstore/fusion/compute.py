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

from ..errors import FusionError
from ..resources import read_sql
from .recipe import Recipe
from .registry import RANKS, Normalization

if TYPE_CHECKING:
    from ..store.handle import StoreHandle

#: "All" as a number of documents in the SQL (depth, top).
ALL = 1 << 62
_serial = itertools.count(1)


def combine_macros(n_runs: int) -> dict[str, str]:
    """The aggregates a method's ``combine`` may name (registry.py's module docstring). A sum adds
    the runs' terms in the order of the runs, 0 for a run without the document, as ranx's
    ``sum([...])`` does: the same double on any number of threads."""

    def ordered_sum(term: str) -> str:
        terms = (f"coalesce(max({term}) FILTER (WHERE pos = {k}), 0)" for k in range(1, n_runs + 1))
        return "(" + " + ".join(terms) + ")"

    return {
        "sum": ordered_sum("v"),
        "wsum": ordered_sum("w * v"),
        "sum_w": ordered_sum("w"),
        "count": "count(*)",
        # numpy's median: the middle value, or the mean of the two middle values
        "median": "(CASE WHEN count(*) % 2 = 1 THEN list_sort(list(v))[count(*) // 2 + 1] "
        "ELSE (list_sort(list(v))[count(*) // 2] + list_sort(list(v))[count(*) // 2 + 1]) / 2 END)",
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
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in read_sql("fusion.sql").splitlines():
        if line.startswith("-- @block "):
            current = out.setdefault(line.split()[2], [])
        elif current is not None and not line.lstrip().startswith("--"):
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def render(recipe: Recipe, inputs: str, candidates: str, params: Sequence[str], out: str) -> str:
    """The statement that fills the temporary table ``out`` (cand, topic, doc, score, rank)."""
    b = blocks()
    m, n = recipe.method, recipe.norm
    value_params = {p: f"cd.{p}" for p in params}
    combine_params = {p: f"any_value({p})" for p in params}
    values = {
        "inputs": inputs,
        "candidates": candidates,
        "rank_column": "submitted_rank" if recipe.ranks == "submitted" else "rank",
        "depth": str(int(recipe.depth) if recipe.depth is not None else ALL),
        "top": str(int(recipe.top) if recipe.top is not None else ALL),
        "norm": n.expr,
        "norm_missing": n.missing,
        "value": string.Template(m.value).substitute(value_params),
        "value_missing": string.Template(m.missing).substitute(value_params),
        "combine": string.Template(m.combine).substitute({**combine_macros(len(recipe.runs)), **combine_params}),
        "param_columns": "".join(f", cd.{p}" for p in params),
    }
    normalized = string.Template(b["normalized"]).substitute(values)
    fused = string.Template(b["fused"]).substitute(values)
    return f"CREATE OR REPLACE TEMP TABLE {out} AS\nWITH {normalized}\n{fused}"


def render_normalized(norm: Normalization, ranks: str, depth: int | None, inputs: str) -> str:
    """The query of the normalised scores of the input runs (pos, topic, doc, counted, s)."""
    values = {
        "inputs": inputs,
        "rank_column": "submitted_rank" if ranks == "submitted" else "rank",
        "depth": str(int(depth) if depth is not None else ALL),
        "norm": norm.expr,
        "norm_missing": norm.missing,
    }
    ctes = string.Template(blocks()["normalized"]).safe_substitute(values)
    return f"WITH {ctes}\nSELECT g.pos, d.topic, d.doc, g.counted, g.s FROM normalized g JOIN docs d ON d.did = g.did"


class FusionWork:
    """The temporary tables of one fusion call (dropped at the end of the ``with`` block)."""

    def __init__(self, store: StoreHandle) -> None:
        self.store = store
        self.con: duckdb.DuckDBPyConnection = store.con
        k = next(_serial)
        self.inputs_table, self.cands_table, self.out = f"_fusion_inputs_{k}", f"_fusion_cands_{k}", f"_fusion_out_{k}"
        self.inputs: list[Input] = []

    def __enter__(self) -> FusionWork:
        return self

    def __exit__(self, *exc: object) -> None:
        for t in (self.inputs_table, self.cands_table, self.out):
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

    def fuse(self, recipe: Recipe, candidates: Sequence[Mapping[str, Any]]) -> str:
        """Fuse the inputs once per candidate (``{"params": {...}, "weights": (...)}``, the recipe's
        own values where a candidate gives none) into the output table; returns its name."""
        params = [p.name for p in recipe.method.params]
        cols: dict[str, list] = {"cand": [], "pos": [], "w": [], **{p: [] for p in params}}
        for c, cand in enumerate(candidates):
            chosen = {**recipe.params, **cand.get("params", {})}
            weights = cand.get("weights") or recipe.weights
            for i in self.inputs:
                cols["cand"].append(c)
                cols["pos"].append(i.pos)
                cols["w"].append(float(weights[i.pos - 1]) if weights else 1.0)
                for p in params:
                    cols[p].append(float(chosen[p]))
        typed = ", ".join(["cand INTEGER", "pos INTEGER", "w DOUBLE", *(f"{p} DOUBLE" for p in params)])
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {self.cands_table} ({typed})")
        self.con.execute(
            f"INSERT INTO {self.cands_table} SELECT {', '.join(f'unnest(${k + 1})' for k in range(len(cols)))}",
            list(cols.values()),
        )
        self.con.execute(render(recipe, self.inputs_table, self.cands_table, params, self.out))
        bad = self.con.execute(f"SELECT topic, doc, score FROM {self.out} WHERE NOT isfinite(score) LIMIT 1").fetchall()
        if bad:
            raise FusionError(
                f"{recipe.method.name} gave the document {bad[0][1]!r} of topic {bad[0][0]!r} the score {bad[0][2]}; "
                f"check the parameters and the input scores"
            )
        return self.out

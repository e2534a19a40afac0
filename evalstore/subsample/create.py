"""Creating subsamples: one deterministic shuffle per (seed, trial, topic), every fraction at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SubsampleError
from .derived import Derivation, drop_staging, parent_of, stage_stats, store_derived
from .params import (
    METHODS,
    TRUNC_EPS,
    check_int,
    fraction_label,
    parse_fractions,
    subsample_name,
    topic_seed,
)

if TYPE_CHECKING:
    import duckdb

    from ..db.handle import StoreHandle


# --------------------------------------------------------------------------- creation
def create_subsamples(
    store: StoreHandle,
    qrels: str,
    fractions: str | Iterable[float],
    trials: int = 1,
    seed: int = 0,
    min_rel: int = 1,
    min_nonrel: int = 10,
    method: str = "buckley_voorhees",
    *,
    prefix: str | None = None,
    replace: bool = False,
) -> list[str]:
    """Create Buckley–Voorhees subsamples of the qrels set ``qrels``; return their names.

    One subsample per (fraction, trial), named ``<prefix>@bv<fraction>#<trial>`` (``prefix``
    defaults to ``qrels``), ordered by fraction as given, then trial. See the module docstring for
    the method, the rounding rule and the determinism guarantee. Existing subsamples with the same
    name and parameters (and content) are kept as they are."""
    if method not in METHODS:
        raise SubsampleError(f"unknown subsample method {method!r}; available: {', '.join(METHODS)}")
    fracs = parse_fractions(fractions)
    trials = check_int("trials", trials, 1, 100_000)
    seed = check_int("seed", seed, 0)
    min_rel = check_int("min_rel", min_rel, 0, 2**31 - 1)
    min_nonrel = check_int("min_nonrel", min_nonrel, 0, 2**31 - 1)
    con = store.con
    parent_id = parent_of(store, qrels)
    prefix = qrels if prefix is None else prefix
    if not prefix:
        raise SubsampleError("the name prefix must not be empty")
    parent_sha = con.execute("SELECT sha256 FROM qrels_meta WHERE qrels_id = ?", [parent_id]).fetchall()[0][0]
    targets = [(subsample_name(prefix, f, t, method), f, t) for f in fracs for t in range(trials)]
    derivations = [
        Derivation(
            name,
            method,
            _source(qrels, parent_sha, method, f, seed, t, min_rel, min_nonrel),
            {"fraction": float(f), "seed": seed, "trial": t, "min_rel": min_rel, "min_nonrel": min_nonrel},
        )
        for name, f, t in targets
    ]
    try:
        with store.transaction():
            _shuffle(con, parent_id, seed, trials, method)
            _stage_rows(con, parent_id, targets, min_rel, min_nonrel)
            store_derived(store, parent_id, derivations, stage_stats(con, len(targets)), replace)
    finally:
        drop_staging(con, ("_ss_base", "_ss_keys_tbl", "_ss_ranked", "_ss_targets"))
    return [name for name, _, _ in targets]


def _stage_rows(con: duckdb.DuckDBPyConnection, parent_id: int, targets: list, min_rel: int, min_nonrel: int) -> None:
    """The kept rows of every target (``_ss_rows``, by target position), plus the parent's
    pooled-but-unjudged rows (grade < 0)."""
    con.execute("CREATE OR REPLACE TEMP TABLE _ss_targets (pos INTEGER, name VARCHAR, fraction DOUBLE, trial INTEGER)")
    con.executemany(
        "INSERT INTO _ss_targets VALUES (?, ?, ?, ?)", [(i, n, f, t) for i, (n, f, t) in enumerate(targets)]
    )
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _ss_rows AS
        SELECT g.pos, r.topic, r.doc, r.grade
        FROM _ss_ranked r JOIN _ss_targets g ON g.trial = r.trial
        WHERE r.pos <= least(r.size, greatest(CASE WHEN r.rel THEN {int(min_rel)} ELSE {int(min_nonrel)} END,
                                              CAST(floor(r.size * g.fraction + {TRUNC_EPS}) AS BIGINT)))
        UNION ALL
        SELECT g.pos, q.topic, q.doc, q.grade
        FROM qrels_data q CROSS JOIN _ss_targets g
        WHERE q.qrels_id = {int(parent_id)} AND q.grade < 0""")


def _source(parent, parent_sha, method, fraction, seed, trial, min_rel, min_nonrel) -> str:
    return (
        f"subsample of {parent} (sha256 {parent_sha[:12]}): {method} fraction={fraction_label(fraction)} "
        f"seed={seed} trial={trial} min_rel={min_rel} min_nonrel={min_nonrel}"
    )


def _shuffle(con, parent_id: int, seed: int, trials: int, method: str) -> None:
    """Temp table ``_ss_ranked(trial, topic, doc, grade, rel, pos, size)``: per trial and topic, the
    judged relevant and nonrelevant documents, each class in its shuffled order (pos 1..size)."""
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _ss_base AS
                   SELECT topic, doc, grade, grade >= 1 AS rel,
                          row_number() OVER (ORDER BY topic, doc) - 1 AS idx
                   FROM qrels_data WHERE qrels_id = ? AND grade >= 0""",
        [parent_id],
    )
    counts = con.execute("SELECT topic, count(*) FROM _ss_base GROUP BY topic ORDER BY topic").fetchall()
    n = sum(c for _, c in counts)
    keys = np.empty((trials, n), dtype=np.uint64)
    for t in range(trials):  # a loop over trials x topics; numpy draws the keys
        start = 0
        for topic, c in counts:
            keys[t, start : start + c] = np.random.PCG64(topic_seed(seed, t, topic, method)).random_raw(c)
            start += c
    _ss_keys = {
        "trial": np.repeat(np.arange(trials, dtype=np.int32), n),  # noqa: F841 (scanned by DuckDB)
        "idx": np.tile(np.arange(n, dtype=np.int64), trials),
        "key": keys.ravel(),
    }
    con.execute("CREATE OR REPLACE TEMP TABLE _ss_keys_tbl AS SELECT trial, idx, key FROM _ss_keys")
    con.execute("""CREATE OR REPLACE TEMP TABLE _ss_ranked AS
                   SELECT k.trial, b.topic, b.doc, b.grade, b.rel,
                          row_number() OVER (PARTITION BY k.trial, b.topic, b.rel ORDER BY k.key, b.doc) AS pos,
                          count(*) OVER (PARTITION BY k.trial, b.topic, b.rel) AS size
                   FROM _ss_base b JOIN _ss_keys_tbl k USING (idx)""")

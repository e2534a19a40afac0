"""Creating subsamples: one deterministic shuffle per (seed, trial, topic), every fraction at once.

The trials are made in blocks (:func:`trial_blocks`: at most :data:`BLOCK_ROWS` staged rows a
block), each shuffled, staged and stored before the next, in one transaction: the memory of a call
does not grow with ``trials`` (``-k 100000``, the largest, ran out of memory when every trial was
staged at once). Each (seed, trial, topic) has its own generator, so the blocks change nothing in
the subsamples made."""

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
    n_rows = con.execute("SELECT count(*) FROM qrels_data WHERE qrels_id = ?", [parent_id]).fetchall()[0][0]
    targets = [(subsample_name(prefix, f, t, method), f, t) for f in fracs for t in range(trials)]
    derivations = {
        name: Derivation(
            name,
            method,
            _source(qrels, parent_sha, method, f, seed, t, min_rel, min_nonrel),
            {"fraction": float(f), "seed": seed, "trial": t, "min_rel": min_rel, "min_nonrel": min_nonrel},
        )
        for name, f, t in targets
    }
    try:
        with store.transaction():
            for first, last in trial_blocks(trials, len(fracs) * max(1, n_rows)):
                block = [target for target in targets if first <= target[2] < last]
                _shuffle(con, parent_id, seed, range(first, last), method)
                _stage_rows(con, parent_id, block, min_rel, min_nonrel)
                stats = stage_stats(con, len(block))
                store_derived(store, parent_id, [derivations[name] for name, _, _ in block], stats, replace)
    finally:
        drop_staging(con, ("_ss_base", "_ss_keys_tbl", "_ss_ranked", "_ss_targets"))
    return [name for name, _, _ in targets]


#: the most staged rows (trials x fractions x the parent's judgments) of one block of trials
BLOCK_ROWS = 2_000_000


def trial_blocks(trials: int, rows_per_trial: int) -> list[tuple[int, int]]:
    """``[(first, last), ...]``: the trials in blocks of at most :data:`BLOCK_ROWS` staged rows (at
    least one trial a block)."""
    size = max(1, BLOCK_ROWS // max(1, rows_per_trial))
    return [(t, min(trials, t + size)) for t in range(0, trials, size)]


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


def _shuffle(con, parent_id: int, seed: int, trials: range, method: str) -> None:
    """Temp table ``_ss_ranked(trial, topic, doc, grade, rel, pos, size)``: per trial of ``trials``
    and topic, the judged relevant and nonrelevant documents, each class in its shuffled order (pos
    1..size)."""
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _ss_base AS
                   SELECT topic, doc, grade, grade >= 1 AS rel,
                          row_number() OVER (ORDER BY topic, doc) - 1 AS idx
                   FROM qrels_data WHERE qrels_id = ? AND grade >= 0""",
        [parent_id],
    )
    counts = con.execute("SELECT topic, count(*) FROM _ss_base GROUP BY topic ORDER BY topic").fetchall()
    n = sum(c for _, c in counts)
    keys = np.empty((len(trials), n), dtype=np.uint64)
    for row, t in enumerate(trials):  # a loop over trials x topics; numpy draws the keys
        start = 0
        for topic, c in counts:
            keys[row, start : start + c] = np.random.PCG64(topic_seed(seed, t, topic, method)).random_raw(c)
            start += c
    _ss_keys = {  # scanned by DuckDB (a Python variable read as a table)
        "trial": np.repeat(np.arange(trials.start, trials.stop, dtype=np.int32), n),
        "idx": np.tile(np.arange(n, dtype=np.int64), len(trials)),
        "key": keys.ravel(),
    }
    con.execute("CREATE OR REPLACE TEMP TABLE _ss_keys_tbl AS SELECT trial, idx, key FROM _ss_keys")
    con.execute("""CREATE OR REPLACE TEMP TABLE _ss_ranked AS
                   SELECT k.trial, b.topic, b.doc, b.grade, b.rel,
                          row_number() OVER (PARTITION BY k.trial, b.topic, b.rel ORDER BY k.key, b.doc) AS pos,
                          count(*) OVER (PARTITION BY k.trial, b.topic, b.rel) AS size
                   FROM _ss_base b JOIN _ss_keys_tbl k USING (idx)""")

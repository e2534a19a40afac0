"""Creating subsamples: one deterministic shuffle per (seed, trial, topic), every fraction at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..db.drop import clear_dependents, plan_drop
from ..errors import SubsampleError
from ..ingest.write import QrelsMeta, write_qrels_meta
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

    pass


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
    parent_id = _parent_id(store, qrels)
    prefix = qrels if prefix is None else prefix
    if not prefix:
        raise SubsampleError("the name prefix must not be empty")
    parent_gains, parent_sha = con.execute(
        "SELECT default_gains, sha256 FROM qrels_meta WHERE qrels_id = ?", [parent_id]
    ).fetchall()[0]
    targets = [(subsample_name(prefix, f, t, method), f, t) for f in fracs for t in range(trials)]
    try:
        with store.transaction():
            _shuffle(con, parent_id, seed, trials, method)
            stats = _stage_rows(con, parent_id, targets, min_rel, min_nonrel)
            ids: dict[int, int] = {}
            for pos, (name, f, t) in enumerate(targets):
                n_rows, n_topics, max_grade, sha = stats[pos]
                params = (parent_id, method, float(f), seed, t, min_rel, min_nonrel)
                keep, old_id = _existing(store, name, params, sha, replace)
                if keep:
                    continue  # same derivation, same content
                source = _source(qrels, parent_sha, method, f, seed, t, min_rel, min_nonrel)
                meta = QrelsMeta(name, source, "subsample", sha, None, n_topics, n_rows, max_grade, parent_gains)
                qid = write_qrels_meta(con, meta, old_id)
                con.execute(
                    """INSERT INTO subsample_meta (qrels_id, parent_id, method, fraction, seed, trial,
                               min_rel, min_nonrel) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                    [qid, *params],
                )
                ids[pos] = qid
            if ids:
                _copy_rows(con, parent_id, ids)
    finally:
        for table in ("_ss_base", "_ss_keys_tbl", "_ss_ranked", "_ss_targets", "_ss_rows", "_ss_ids"):
            con.execute(f"DROP TABLE IF EXISTS {table}")
    return [name for name, _, _ in targets]


def _parent_id(store: StoreHandle, qrels: str) -> int:
    """The id of the qrels set to subsample, which must not itself be a subsample."""
    parent_id = store.qrels_id(qrels)
    grandparent = store.con.execute(
        "SELECT p.name FROM subsample_meta s JOIN qrels_meta p ON p.qrels_id = s.parent_id WHERE s.qrels_id = ?",
        [parent_id],
    ).fetchone()
    if grandparent:
        raise SubsampleError(
            f"{qrels!r} is itself a subsample of {grandparent[0]!r}; subsample {grandparent[0]!r} instead "
            f"(the fractions of one trial are nested, so a smaller fraction of it is a subset of {qrels!r})"
        )
    return parent_id


def _stage_rows(
    con: duckdb.DuckDBPyConnection, parent_id: int, targets: list, min_rel: int, min_nonrel: int
) -> dict[int, tuple]:
    """The kept rows of every target (``_ss_rows``, by target position), plus the parent's
    pooled-but-unjudged rows (grade < 0); per target: rows, topics, highest grade, content hash."""
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
    return {
        row[0]: row[1:]
        for row in con.execute("""
        SELECT g.pos, count(r.doc), count(DISTINCT r.topic), max(r.grade),
               sha256(coalesce(string_agg(r.topic || ' ' || r.doc || ' ' || r.grade::VARCHAR, chr(10)
                                          ORDER BY r.topic, r.doc), ''))
        FROM _ss_targets g LEFT JOIN _ss_rows r USING (pos) GROUP BY g.pos""").fetchall()
    }


def _existing(store: StoreHandle, name: str, params: tuple, sha: str, replace: bool) -> tuple[bool, int | None]:
    """Whether to keep the stored subsample ``name`` as it is (same derivation, same content), and
    else the id of the stored one to replace (everything that depends on it deleted, as by
    ``drop qrels``: judgments, scores, intervals, the analyses that read it; None: there is none);
    an error when it may not be replaced."""
    con = store.con
    existing = con.execute(
        "SELECT q.qrels_id, q.sha256, s.parent_id, s.method, s.fraction, s.seed, s.trial, s.min_rel, "
        "s.min_nonrel FROM qrels_meta q LEFT JOIN subsample_meta s USING (qrels_id) WHERE q.name = ?",
        [name],
    ).fetchone()
    if existing is None:
        return False, None
    if existing[2] is None:
        raise SubsampleError(
            f"a qrels set named {name!r} already exists and is not a subsample; choose another name prefix (--prefix)"
        )
    if tuple(existing[2:]) == params and existing[1] == sha:
        return True, None
    if not replace:
        old = dict(zip(("method", "fraction", "seed", "trial", "min_rel", "min_nonrel"), existing[3:]))
        same = tuple(existing[2:]) == params
        why = "its parent's judgments changed since" if same else f"it was made with {_describe_params(old)}"
        raise SubsampleError(
            f"subsample {name!r} already exists and {why}; pass replace=True (--replace) to "
            f"recreate it, or prefix= (--prefix) to store these under other names"
        )
    clear_dependents(store, plan_drop(store, "qrels", [name]))
    return False, int(existing[0])


def _copy_rows(con: duckdb.DuckDBPyConnection, parent_id: int, ids: dict[int, int]) -> None:
    """Store the staged rows of the targets in ``ids`` (position -> new qrels id), with the
    diversity judgments of the documents kept and the parent's intent probabilities."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _ss_ids AS SELECT unnest(?::INTEGER[]) AS pos, unnest(?::INTEGER[]) AS qrels_id",
        [list(ids), list(ids.values())],
    )
    con.execute("""INSERT INTO qrels_data (qrels_id, topic, doc, grade)
                   SELECT i.qrels_id, r.topic, r.doc, r.grade FROM _ss_rows r JOIN _ss_ids i USING (pos)
                   ORDER BY i.qrels_id, r.topic, r.doc""")
    con.execute(f"""INSERT INTO subtopic_qrels_data (qrels_id, topic, subtopic, doc, grade)
                   SELECT i.qrels_id, p.topic, p.subtopic, p.doc, p.grade
                   FROM _ss_ids i JOIN qrels_data c ON c.qrels_id = i.qrels_id
                   JOIN subtopic_qrels_data p ON p.qrels_id = {int(parent_id)}
                        AND p.topic = c.topic AND p.doc = c.doc
                   ORDER BY i.qrels_id, p.topic, p.subtopic, p.doc""")
    con.execute(f"""INSERT INTO subtopic_probs (qrels_id, topic, subtopic, prob)
                   SELECT i.qrels_id, p.topic, p.subtopic, p.prob
                   FROM _ss_ids i CROSS JOIN subtopic_probs p WHERE p.qrels_id = {int(parent_id)}""")


def _describe_params(p: dict) -> str:
    return ", ".join(f"{k}={fraction_label(v) if k == 'fraction' else v}" for k, v in p.items())


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

"""Judgment subsamples: named, reproducible reductions of a qrels set (Buckley & Voorhees 2004).

A subsample is an ordinary qrels set of the store (a ``qrels_meta`` row, its judgments in
``qrels_data``, the parent's ``default_gains``), so every metric, ``evalstore eval``, the
``scores`` / ``leaderboard`` views and the exports work on it unchanged. Its derivation is recorded
in ``subsample_meta`` (method, fraction, seed, trial, min_rel, min_nonrel, parent) and listed, with
its sizes, by the view ``subsamples``.

Method ``buckley_voorhees`` (Buckley & Voorhees, SIGIR 2004; Sakai, SIGIR 2007 Sec. 5; Bompada et
al., SIGIR 2007 Sec. 4.1). Per topic and trial, the judged relevant documents (grade >= 1) and the
judged nonrelevant ones (grade 0) are shuffled once, separately. Fraction f keeps the first

    R_f = min(R, max(min_rel,    floor(R * f + 1e-9)))     relevant and
    N_f = min(N, max(min_nonrel, floor(N * f + 1e-9)))     nonrelevant

documents of the two shuffled lists. The 1e-9 absorbs floating-point error in ``R * f``
(0.29 * 100 = 28.999999999999996 in binary floating point, but keeps 29). One shuffle serves every
fraction of a trial, so a smaller fraction is a subset of a larger one. Rows with a negative grade
("in the pool but unjudged", trec_eval's reading) are not judgments: they are copied unchanged.

Determinism: the shuffle does not depend on Python's hash order or DuckDB's ``random()``. The
judged documents of a topic are sorted by docno (byte order); each gets a 64-bit key from
``numpy.random.PCG64(s).random_raw()``, where ``s`` is the first 16 bytes (little endian) of
``sha256("buckley_voorhees|<seed>|<trial>|<topic>")``; the shuffled order is the keys ascending
(ties, which have probability 2^-64, by docno). PCG64 and its SeedSequence seeding are NumPy's
stable bit-generator streams, so the same seed gives the same subsample on any machine.

Names: ``<prefix>@bv<fraction>#<trial>`` with ``prefix`` = the parent's name by default, the
fraction written in its shortest exact form (``0.05``, ``0.5``, ``1``) and 0-based trials, e.g.
``dl19@bv0.05#0``. Re-creating a subsample with the same parameters is a no-op; a name clash with
different parameters (another seed, other minimums, a changed parent) is an error unless
``replace=True``; use ``prefix=`` to keep several seeds side by side.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import NotFoundError, SubsampleError
from .evaluate import evaluate_many
from .report import writers

if TYPE_CHECKING:
    from .store import Store

METHODS = ("buckley_voorhees",)
METHOD_TAGS = {"buckley_voorhees": "bv"}

#: Bompada et al. (SIGIR 2007) Sec. 4.1: F = {0.01, ..., 0.05, 0.1, ..., 0.9} (14 values).
BOMPADA_FRACTIONS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Sakai (SIGIR 2007) Sec. 5: j in {90, 70, 50, 30, 10} percent.
SAKAI_FRACTIONS = (0.9, 0.7, 0.5, 0.3, 0.1)
PRESETS = {"bompada": BOMPADA_FRACTIONS, "sakai": SAKAI_FRACTIONS}

#: Tolerance added before truncating R * f (see the module docstring).
TRUNC_EPS = 1e-9


# --------------------------------------------------------------------------- parameters
def parse_fractions(spec: str | float | Iterable[float]) -> list[float]:
    """Fractions from ``'0.9,0.7,0.5'``, a preset name (``'bompada'``, ``'sakai'``) or numbers.

    Each must satisfy 0 < f <= 1; duplicates are dropped, the order given is kept."""
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() in PRESETS:
            values: list[float] = list(PRESETS[text.lower()])
        else:
            values = []
            for part in (p.strip() for p in text.split(",")):
                if not part:
                    continue
                try:
                    values.append(float(part[:-1]) / 100 if part.endswith("%") else float(part))
                except ValueError:
                    raise SubsampleError(
                        f"fraction {part!r} is not a number; give fractions such as 0.9,0.5,0.1 (or 50%), "
                        f"or a preset: {', '.join(PRESETS)}"
                    ) from None
    elif isinstance(spec, (int, float)):
        values = [float(spec)]
    else:
        values = [float(x) for x in spec]
    if not values:
        raise SubsampleError("no fraction given; e.g. --fractions 0.9,0.7,0.5,0.3,0.1 or --fractions bompada")
    for f in values:
        if not (0 < f <= 1) or math.isnan(f):
            raise SubsampleError(f"fraction {f!r} is outside (0, 1]; a fraction is the share of judgments kept")
    return list(dict.fromkeys(values))


def fraction_label(fraction: float) -> str:
    """Shortest exact decimal form of a fraction: 0.05 -> '0.05', 1.0 -> '1'."""
    text = repr(float(fraction))
    return text[:-2] if text.endswith(".0") else text


def subsample_name(prefix: str, fraction: float, trial: int, method: str = "buckley_voorhees") -> str:
    """``<prefix>@bv<fraction>#<trial>``."""
    return f"{prefix}@{METHOD_TAGS[method]}{fraction_label(fraction)}#{trial}"


def topic_seed(seed: int, trial: int, topic: str, method: str = "buckley_voorhees") -> int:
    """The 128-bit PCG64 seed of one (seed, trial, topic) shuffle."""
    digest = hashlib.sha256(f"{method}|{int(seed)}|{int(trial)}|{topic}".encode()).digest()
    return int.from_bytes(digest[:16], "little")


def _check_int(name: str, value, minimum: int, maximum: int = 2**63 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SubsampleError(f"{name} must be an integer, not {value!r}")
    if not (minimum <= int(value) <= maximum):
        raise SubsampleError(f"{name} must be between {minimum} and {maximum}, not {value}")
    return int(value)


# --------------------------------------------------------------------------- creation
def create_subsamples(
    store,
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
    trials = _check_int("trials", trials, 1, 100_000)
    seed = _check_int("seed", seed, 0)
    min_rel = _check_int("min_rel", min_rel, 0, 2**31 - 1)
    min_nonrel = _check_int("min_nonrel", min_nonrel, 0, 2**31 - 1)
    con = store.con
    parent_id = store.qrels_id(qrels)
    grandparent = con.execute(
        "SELECT p.name FROM subsample_meta s JOIN qrels_meta p ON p.qrels_id = s.parent_id WHERE s.qrels_id = ?",
        [parent_id],
    ).fetchone()
    if grandparent:
        raise SubsampleError(
            f"{qrels!r} is itself a subsample of {grandparent[0]!r}; subsample {grandparent[0]!r} instead "
            f"(the fractions of one trial are nested, so a smaller fraction of it is a subset of {qrels!r})"
        )
    prefix = qrels if prefix is None else prefix
    if not prefix:
        raise SubsampleError("the name prefix must not be empty")
    parent_gains, parent_sha = con.execute(
        "SELECT default_gains, sha256 FROM qrels_meta WHERE qrels_id = ?", [parent_id]
    ).fetchone()
    targets = [(subsample_name(prefix, f, t, method), f, t) for f in fracs for t in range(trials)]

    with store.transaction():
        _shuffle(con, parent_id, seed, trials, method)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _ss_targets (pos INTEGER, name VARCHAR, fraction DOUBLE, trial INTEGER)"
        )
        con.executemany(
            "INSERT INTO _ss_targets VALUES (?, ?, ?, ?)", [(i, n, f, t) for i, (n, f, t) in enumerate(targets)]
        )
        # The kept rows of every target, plus the parent's pooled-but-unjudged rows (grade < 0).
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE _ss_rows AS
            SELECT g.pos, r.topic, r.doc, r.grade
            FROM _ss_ranked r JOIN _ss_targets g ON g.trial = r.trial
            WHERE r.pos <= least(r.size, greatest(CASE WHEN r.rel THEN {min_rel} ELSE {min_nonrel} END,
                                                  CAST(floor(r.size * g.fraction + {TRUNC_EPS}) AS BIGINT)))
            UNION ALL
            SELECT g.pos, q.topic, q.doc, q.grade
            FROM qrels_data q CROSS JOIN _ss_targets g
            WHERE q.qrels_id = {int(parent_id)} AND q.grade < 0""")
        stats = {
            row[0]: row[1:]
            for row in con.execute("""
            SELECT g.pos, count(r.doc), count(DISTINCT r.topic), max(r.grade),
                   sha256(coalesce(string_agg(r.topic || ' ' || r.doc || ' ' || r.grade::VARCHAR, chr(10)
                                              ORDER BY r.topic, r.doc), ''))
            FROM _ss_targets g LEFT JOIN _ss_rows r USING (pos) GROUP BY g.pos""").fetchall()
        }
        ids: dict[int, int] = {}
        for pos, (name, f, t) in enumerate(targets):
            n_rows, n_topics, max_grade, sha = stats[pos]
            params = (parent_id, method, float(f), seed, t, min_rel, min_nonrel)
            existing = con.execute(
                "SELECT q.qrels_id, q.sha256, s.parent_id, s.method, s.fraction, s.seed, s.trial, s.min_rel, "
                "s.min_nonrel FROM qrels_meta q LEFT JOIN subsample_meta s USING (qrels_id) WHERE q.name = ?",
                [name],
            ).fetchone()
            if existing is not None:
                if existing[2] is None:
                    raise SubsampleError(
                        f"a qrels set named {name!r} already exists and is not a subsample; "
                        f"choose another name prefix (--prefix)"
                    )
                if tuple(existing[2:]) == params and existing[1] == sha:
                    continue  # same derivation, same content: keep
                if not replace:
                    old = dict(zip(("method", "fraction", "seed", "trial", "min_rel", "min_nonrel"), existing[3:]))
                    why = (
                        "its parent's judgments changed since"
                        if tuple(existing[2:]) == params
                        else f"it was made with {_describe_params(old)}"
                    )
                    raise SubsampleError(
                        f"subsample {name!r} already exists and {why}; pass replace=True (--replace) to "
                        f"recreate it, or prefix= (--prefix) to store these under other names"
                    )
                qid = existing[0]
                _delete_contents(con, [qid])
                con.execute(
                    """UPDATE qrels_meta SET source = ?, sha256 = ?, n_topics = ?, n_judged = ?,
                               max_grade = ?, default_gains = ?, ingested_at = current_timestamp
                               WHERE qrels_id = ?""",
                    [
                        _source(qrels, parent_sha, method, f, seed, t, min_rel, min_nonrel),
                        sha,
                        n_topics,
                        n_rows,
                        max_grade,
                        parent_gains,
                        qid,
                    ],
                )
            else:
                qid = con.execute(
                    """INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade,
                       default_gains) VALUES (?, ?, 'subsample', ?, ?, ?, ?, ?) RETURNING qrels_id""",
                    [
                        name,
                        _source(qrels, parent_sha, method, f, seed, t, min_rel, min_nonrel),
                        sha,
                        n_topics,
                        n_rows,
                        max_grade,
                        parent_gains,
                    ],
                ).fetchone()[0]
            con.execute(
                """INSERT INTO subsample_meta (qrels_id, parent_id, method, fraction, seed, trial,
                           min_rel, min_nonrel) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                [qid, *params],
            )
            ids[pos] = qid
        if ids:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _ss_ids AS SELECT unnest(?::INTEGER[]) AS pos, "
                "unnest(?::INTEGER[]) AS qrels_id",
                [list(ids), list(ids.values())],
            )
            con.execute("""INSERT INTO qrels_data (qrels_id, topic, doc, grade)
                           SELECT i.qrels_id, r.topic, r.doc, r.grade FROM _ss_rows r JOIN _ss_ids i USING (pos)
                           ORDER BY i.qrels_id, r.topic, r.doc""")
    for table in ("_ss_base", "_ss_keys_tbl", "_ss_ranked", "_ss_targets", "_ss_rows", "_ss_ids"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    return [name for name, _, _ in targets]


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


def _delete_contents(con, qrels_ids: Sequence[int]) -> None:
    ids = ", ".join(str(int(q)) for q in qrels_ids)
    for table in ("qrels_data", "score_data", "evaluations", "subsample_meta"):
        con.execute(f"DELETE FROM {table} WHERE qrels_id IN ({ids})")


# --------------------------------------------------------------------------- queries
def list_subsamples(store, parent: str | None = None):
    """The ``subsamples`` view (name, parent, method, fraction, seed, trial, min_rel, min_nonrel,
    n_topics, n_judged, n_rel, n_nonrel, created_at), for one parent or all, ordered by parent,
    fraction (largest first) and trial."""
    where, params = "", None
    if parent is not None:
        store.qrels_id(parent)
        where, params = "WHERE parent = ?", [parent]
    return store.sql(f"SELECT * FROM subsamples {where} ORDER BY parent, fraction DESC, trial, name", params)


def subsample_names(store, parent: str) -> list[str]:
    """All subsamples of ``parent``, largest fraction first, then by trial."""
    return [r[0] for r in list_subsamples(store, parent).rows]


def resolve_subsamples(store, parent: str, spec: str | Sequence[str] = "all") -> list[str]:
    """Subsamples of ``parent`` selected by ``spec``: ``'all'``, a list (or comma-separated text)
    of subsample names, or of fractions (every trial of those fractions)."""
    known = list_subsamples(store, parent).records()
    if isinstance(spec, str):
        if spec.strip().lower() == "all":
            if not known:
                raise NotFoundError(
                    f"qrels {parent!r} has no subsamples; create some with "
                    f"`evalstore subsample --qrels {parent} --fractions 0.9,0.7,0.5,0.3,0.1`"
                )
            return [k["name"] for k in known]
        items = [s.strip() for s in spec.split(",") if s.strip()]
    else:
        items = [str(s) for s in spec]
    out: list[str] = []
    by_name = {k["name"]: k for k in known}
    for item in items:
        if item in by_name:
            out.append(item)
            continue
        try:
            f = float(item)
        except ValueError:
            raise NotFoundError(
                f"{item!r} is not a subsample of {parent!r}"
                + (
                    f" (its subsamples: {', '.join(list(by_name)[:8])}{' ...' if len(by_name) > 8 else ''})"
                    if by_name
                    else "; it has none yet (`evalstore subsample --qrels ...`)"
                )
            ) from None
        hits = [k["name"] for k in known if abs(k["fraction"] - f) < 1e-12]
        if not hits:
            have = sorted({k["fraction"] for k in known}, reverse=True)
            raise NotFoundError(
                f"qrels {parent!r} has no subsample at fraction {item}"
                + (f" (fractions: {', '.join(fraction_label(x) for x in have)})" if have else "")
            )
        out.extend(hits)
    return list(dict.fromkeys(out))


def topic_sizes(store, name: str):
    """Per topic of a subsample: judged relevant / nonrelevant counts of the parent and of the
    subsample (columns topic, parent_rel, parent_nonrel, n_rel, n_nonrel)."""
    qid = store.qrels_id(name)
    row = store.con.execute("SELECT parent_id FROM subsample_meta WHERE qrels_id = ?", [qid]).fetchone()
    if row is None:
        raise NotFoundError(f"qrels set {name!r} is not a subsample (see `evalstore subsample list`)")
    return store.sql(
        """
        WITH c AS (
            SELECT qrels_id, topic, count(*) FILTER (WHERE grade >= 1) AS n_rel,
                   count(*) FILTER (WHERE grade = 0) AS n_nonrel
            FROM qrels_data WHERE qrels_id IN (?, ?) GROUP BY qrels_id, topic)
        SELECT p.topic, p.n_rel AS parent_rel, p.n_nonrel AS parent_nonrel,
               coalesce(s.n_rel, 0) AS n_rel, coalesce(s.n_nonrel, 0) AS n_nonrel
        FROM c p LEFT JOIN c s ON s.qrels_id = ? AND s.topic = p.topic
        WHERE p.qrels_id = ? ORDER BY p.topic""",
        [row[0], qid, qid, row[0]],
    )


def drop_subsamples(store, names: Sequence[str]) -> int:
    """Delete subsamples (their judgments, scores and derivation). Returns how many were deleted."""
    ids = []
    for name in names:
        qid = store.qrels_id(name)
        if store.con.execute("SELECT 1 FROM subsample_meta WHERE qrels_id = ?", [qid]).fetchone() is None:
            raise SubsampleError(f"{name!r} is not a subsample; only subsamples can be dropped here")
        ids.append(qid)
    if ids:
        with store.transaction():
            _delete_contents(store.con, ids)
            store.con.execute(f"DELETE FROM qrels_meta WHERE qrels_id IN ({', '.join(map(str, ids))})")
    return len(ids)


# --------------------------------------------------------------------------- export
def qrels_rows(store: Store, name: str) -> list[tuple[str, str, int]]:
    """The judgments of a qrels set (e.g. a subsample) as ``(topic, doc, grade)``, sorted by topic
    and docno (byte order)."""
    qid = store.qrels_id(name)
    return store.con.execute(
        "SELECT topic, doc, grade FROM qrels_data WHERE qrels_id = ? ORDER BY topic, doc", [qid]
    ).fetchall()


def qrels_text(store: Store, name: str) -> str:
    """A qrels set in TREC qrels format: ``topic 0 docno grade`` per line, sorted by topic and
    docno (byte order), no comments or blank lines."""
    return writers.qrels_text(qrels_rows(store, name))


def export_qrels(store, name: str, path: str | os.PathLike) -> int:
    """Write the qrels set ``name`` as a TREC qrels file (``'-'`` = stdout); returns the number of lines."""
    text = qrels_text(store, name)
    if os.fspath(path) == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return text.count("\n")


# --------------------------------------------------------------------------- evaluation
def evaluate_subsamples(
    store,
    qrels: str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    subsamples: str | Sequence[str] = "all",
    *,
    include_parent: bool = True,
    **options,
):
    """Evaluate runs against ``qrels`` and its subsamples in one bulk pass
    (:func:`evalstore.evaluate.evaluate_many`: one ranked judged list per context covers
    every qrels set). Returns ``{qrels name: EvalResult}``, parent first, then the subsamples
    (largest fraction first, then by trial). Options as for :meth:`Store.evaluate`."""
    names = resolve_subsamples(store, qrels, subsamples)
    order = ([qrels] if include_parent else []) + names
    return evaluate_many(store, order, runs, metrics, **options)


def derivations(store: Store) -> dict[str, tuple[float, int]]:
    """``{subsample name: (fraction, trial)}`` of every subsample in the store."""
    rows = store.con.execute(
        "SELECT q.name, s.fraction, s.trial FROM subsample_meta s JOIN qrels_meta q USING (qrels_id)"
    ).fetchall()
    return {name: (fraction, trial) for name, fraction, trial in rows}

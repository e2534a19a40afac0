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

from typing import TYPE_CHECKING

from ..base.lazy import exports

if TYPE_CHECKING:
    from ..errors import SubsampleError
    from .create import create_subsamples
    from .manage import (
        derivations,
        drop_subsamples,
        evaluate_subsamples,
        export_qrels,
        list_subsamples,
        plan_drop_subsamples,
        qrels_rows,
        qrels_text,
        resolve_subsamples,
        subsample_names,
        topic_sizes,
    )
    from .params import (
        BOMPADA_FRACTIONS,
        METHOD_TAGS,
        METHODS,
        PRESETS,
        SAKAI_FRACTIONS,
        TRUNC_EPS,
        fraction_label,
        parse_fractions,
        subsample_name,
        topic_seed,
    )

#: each name to its module, imported on first use (:mod:`evalstore.base.lazy`): evaluating a store
#: (``Store.evaluate``, ``evalstore eval``) reads :mod:`.manage`, not the making of subsamples
__getattr__, __dir__ = exports(
    __name__,
    {
        "SubsampleError": "..errors",
        "create_subsamples": ".create",
        "derivations": ".manage",
        "drop_subsamples": ".manage",
        "evaluate_subsamples": ".manage",
        "export_qrels": ".manage",
        "list_subsamples": ".manage",
        "plan_drop_subsamples": ".manage",
        "qrels_rows": ".manage",
        "qrels_text": ".manage",
        "resolve_subsamples": ".manage",
        "subsample_names": ".manage",
        "topic_sizes": ".manage",
        "BOMPADA_FRACTIONS": ".params",
        "METHOD_TAGS": ".params",
        "METHODS": ".params",
        "PRESETS": ".params",
        "SAKAI_FRACTIONS": ".params",
        "TRUNC_EPS": ".params",
        "fraction_label": ".params",
        "parse_fractions": ".params",
        "subsample_name": ".params",
        "topic_seed": ".params",
    },
)

__all__ = [
    "BOMPADA_FRACTIONS",
    "METHODS",
    "METHOD_TAGS",
    "PRESETS",
    "SAKAI_FRACTIONS",
    "TRUNC_EPS",
    "SubsampleError",
    "create_subsamples",
    "derivations",
    "drop_subsamples",
    "evaluate_subsamples",
    "export_qrels",
    "fraction_label",
    "plan_drop_subsamples",
    "list_subsamples",
    "parse_fractions",
    "qrels_rows",
    "qrels_text",
    "resolve_subsamples",
    "subsample_name",
    "subsample_names",
    "topic_seed",
    "topic_sizes",
]

"""The Python SQL function of the diversity metrics (sql/diversity.sql): ndeval's greedy ideal ranking.

``diversity_greedy_gains(docs VARCHAR[], subtopics VARCHAR[], alpha DOUBLE) -> DOUBLE[]``
    One topic's relevant (doc, subtopic) pairs (``docs[i]`` is relevant to ``subtopics[i]``;
    order does not matter). Returns the gains of ndeval's greedy ideal ranking, rank by rank: at
    each rank the document with the largest novelty gain ``sum_s rel_s(d) (1 - alpha)^c_s`` is
    taken (``c_s``: documents already placed that are relevant to subtopic s), ties going to the
    larger docno (byte-wise), as ndeval 4.5 does. The list ends when every relevant document is
    placed. An empty list for NULL or empty input.

Finding the greedy ranking is NP-hard to do optimally and iterative to do greedily, so it is not
expressible as one set-based SQL statement: it runs here, once per (qrels set, topic) and context,
vectorised over a topic's documents with numpy (one row per topic of an Arrow batch).

It is bounded (a topic of real judgments has hundreds of relevant documents and a few subtopics;
one call cannot be interrupted by DuckDB): the documents x subtopics matrix must fit the
connection's memory limit, and the greedy steps (documents^2 x subtopics) at most :data:`MAX_STEPS`;
a larger topic is refused with its sizes, instead of gigabytes under ``--memory-limit 100MB`` and
minutes that an interrupt waits out.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ..base.python_udf import sql_function
from . import udf_lists as L

#: the most greedy steps (documents x documents x subtopics) of one topic: about 10 s of numpy
MAX_STEPS = 10**10


def greedy_gains(docs: list[str], subtopics: list[str], alpha: float, budget: int | None = None) -> list[float]:
    """The gains of the greedy ideal ranking of one topic (see the module docstring); ``budget``:
    the connection's memory limit in bytes, half of which the topic's matrix may take (None: no
    memory bound)."""
    udocs = sorted(set(docs), key=lambda d: d.encode("utf-8"))
    usubs = sorted(set(subtopics), key=lambda s: s.encode("utf-8"))
    if not udocs:
        return []
    _check_size(len(udocs), len(usubs), budget)
    di = {d: i for i, d in enumerate(udocs)}
    si = {s: j for j, s in enumerate(usubs)}
    n, m = len(udocs), len(usubs)
    rel = np.zeros((n, m), dtype=bool)
    rel[[di[d] for d in docs], [si[s] for s in subtopics]] = True
    seen = np.zeros(m)
    left = np.ones(n, dtype=bool)
    out: list[float] = []
    for _ in range(n):
        weight = np.power(1.0 - alpha, seen)
        gain = np.zeros(n)
        for j in range(m):  # added subtopic by subtopic, as ndeval sums them
            gain += np.where(rel[:, j], weight[j], 0.0)
        gain[~left] = -1.0
        best = n - 1 - int(np.argmax(gain[::-1]))  # the largest gain; ties: the larger docno
        out.append(float(gain[best]))
        left[best] = False
        seen += rel[best]
    return out


def _check_size(n: int, m: int, budget: int | None) -> None:
    """Refuse a topic whose matrix does not fit ``budget`` bytes or whose steps exceed MAX_STEPS."""
    cells = n * m
    if budget is not None and cells * _BYTES_PER_CELL > budget // 2:
        raise ValueError(
            f"diversity_greedy_gains: a topic of {n:,} relevant documents and {m:,} subtopics needs about "
            f"{cells * _BYTES_PER_CELL / 2**20:,.0f} MiB, more than half the connection's memory limit "
            f"({budget / 2**20:,.0f} MiB)"
        )
    if n * n * m > MAX_STEPS:
        raise ValueError(
            f"diversity_greedy_gains: a topic of {n:,} relevant documents and {m:,} subtopics takes {n * n * m:,.0f} "
            f"greedy steps (documents^2 x subtopics), more than {MAX_STEPS:,}: is it one topic of real judgments?"
        )


#: bytes per (document, subtopic) cell: the relevance matrix, and its column of each step
_BYTES_PER_CELL = 2


@sql_function(
    "diversity_greedy_gains", ["VARCHAR[]", "VARCHAR[]", "DOUBLE"], "DOUBLE[]", null_handling="special",
    arrow=True, bounded=True,
)  # fmt: skip
def _diversity_greedy_gains(budget: int) -> Callable[..., pa.Array]:
    def diversity_greedy_gains(docs, subtopics, alpha) -> pa.Array:
        """ndeval's greedy ideal ranking of each topic of the batch, as its list of gains."""
        d = L.chunk(docs).to_pylist()
        s = L.chunk(subtopics).to_pylist()
        a = L.chunk(alpha).to_pylist()
        out: list[list[float]] = []
        for dd, ss, aa in zip(d, s, a, strict=True):
            if dd is None or ss is None or aa is None:
                out.append([])
                continue
            if len(dd) != len(ss):
                raise ValueError("diversity_greedy_gains: docs and subtopics must have the same length")
            out.append(greedy_gains(dd, ss, float(aa), budget))
        return pa.array(out, pa.list_(pa.float64()))

    return diversity_greedy_gains

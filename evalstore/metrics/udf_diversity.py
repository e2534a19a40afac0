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
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..base.python_udf import sql_function
from . import udf_lists as L


def greedy_gains(docs: list[str], subtopics: list[str], alpha: float) -> list[float]:
    """The gains of the greedy ideal ranking of one topic (see the module docstring)."""
    udocs = sorted(set(docs), key=lambda d: d.encode("utf-8"))
    usubs = sorted(set(subtopics), key=lambda s: s.encode("utf-8"))
    if not udocs:
        return []
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


@sql_function(
    "diversity_greedy_gains", ["VARCHAR[]", "VARCHAR[]", "DOUBLE"], "DOUBLE[]", null_handling="special", arrow=True
)
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
        out.append(greedy_gains(dd, ss, float(aa)))
    return pa.array(out, pa.list_(pa.float64()))

"""ranx's runs (numba dictionaries of topic -> {document: score}) to and from arrays, by compiled
loops: reading them from Python costs microseconds per document. Used by tests/ranx_fusion_kit.py
(imported when a kit is made, so that collecting the tests does not import numba)."""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict, List

#: a topic's documents and scores, as ranx keeps them
_DOCS = types.DictType(types.unicode_type, types.float64)


@njit(cache=True)
def _integer(s):
    """A decimal id as an integer (TREC DL's topic and passage ids); anything else (a sign, a
    leading zero, another character) raises, so that two ids never share an integer."""
    if len(s) == 0 or len(s) > 18 or (len(s) > 1 and s[0] == "0"):
        raise ValueError("an id that is not a decimal integer")
    v = 0
    for ch in s:
        c = ord(ch) - 48
        if c < 0 or c > 9:
            raise ValueError("an id that is not a decimal integer")
        v = v * 10 + c
    return v


@njit(cache=True)
def flatten(run):
    """A ranx run as arrays: topic ids, document ids (integers) and scores, in the run's order."""
    n = 0
    for t in run:
        n += len(run[t])
    topics = np.empty(n, dtype=np.int64)
    docs = np.empty(n, dtype=np.int64)
    scores = np.empty(n, dtype=np.float64)
    i = 0
    for t in run:
        tid = _integer(t)
        inner = run[t]
        for d in inner:
            topics[i] = tid
            docs[i] = _integer(d)
            scores[i] = inner[d]
            i += 1
    return topics, docs, scores


@njit(cache=True)
def typed_run(topics, docs, scores):
    """ranx's run dictionary filled in the order of the rows (``topics``, ``docs``: numba lists of
    strings; ``scores``: float64)."""
    outer = Dict.empty(key_type=types.unicode_type, value_type=_DOCS)
    for i in range(len(topics)):
        t = topics[i]
        if t not in outer:
            outer[t] = Dict.empty(key_type=types.unicode_type, value_type=types.float64)
        outer[t][docs[i]] = scores[i]
    return outer


def unicode_list(values: list[str]) -> List:
    """A numba list of strings."""
    out = List.empty_list(types.unicode_type)
    out.extend(values)
    return out

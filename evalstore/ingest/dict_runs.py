"""A run given as ``{topic: {doc: score}}``, narrowed to its judged rows straight from the dicts.

:func:`evalstore.ingest.fast.ranked_rows` ranks a run given in memory once it is an Arrow table:
every docno and score converted (10 M rows: 2 CPU-s of the 3.5 that ``evaluate(dicts)`` took at
100,000 topics x 100), every row ranked. The measures computed in numpy
(:mod:`evalstore.evaluation.numpy_measures`) read only the judged rows and each topic's count of
rows. :func:`judged_rows` makes those from the dicts, as :func:`~evalstore.ingest.fast.ranked_rows`
would with ``keep_docs``:

* the judged (topic, docno) pairs are looked up in the run's dicts (a few C-level ``map`` calls over
  the qrels' pairs, no Python loop over the run's rows);
* each judged row's rank in trec_eval's order (score descending, ties by docno descending,
  byte-wise) is one plus the rows of its topic ranked above it: its score compared with every score
  of its topic in numpy, and where another row ties with it, their docnos compared (Python's order
  of ``str`` is UTF-8's byte order);
* every row is checked as :func:`evalstore.ingest.sources.run_table` checks it: the scores are
  converted by Arrow as there (one array of all scores, no list of them) and must be finite, and
  the topics and docnos must each be one field of a file (not empty, no blank, tab, line break or
  control character: one scan of their bytes joined).

Anything else (keys that are not strings, scores Arrow refuses, a docno that is not one field, few
rows: :data:`MIN_ROWS`, many ties) gives None: the run then takes the general path, which
gives the same rows or the exact error (tests/evalstore/ingest/test_dict_runs.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain, compress, repeat
from operator import is_not
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.lib.stride_tricks import sliding_window_view

from .sources import no_field_breaker

#: Runs of fewer rows take the general path: it is as fast on them (1,000 x 100: 22 against 24 ms;
#: 50 x 1,000 with 100 judged rows a topic: 21 against 15 ms), the conversion of every docno and
#: the page faults of its arrays being what this path saves (10,000 x 100: 80 against 220 ms).
MIN_ROWS = 1 << 17
#: The judged rows' scores are compared with every score of their topics (a window as long as the
#: longest of them in a part of the run) while that makes at most this many comparisons per row of
#: the part (about 1.5 ns each), else the part's rows are sorted (150-300 ns a row).
PAIRS_PER_ROW = 32
#: Comparisons made at a time (a few arrays of this length in memory, whatever the run's size).
PAIRS_PER_BLOCK = 1 << 21
#: Rows of the run read at a time (whole topics): a part's arrays stay in a processor's cache, its
#: dicts are looked up while there, and the memory of one part is reused by the next (10 M rows
#: converted at once: 0.4 CPU-s of page faults).
ROWS_PER_PART = 1 << 16
#: Tied (judged row, other row) pairs whose docnos are compared in Python, at most (and at most one
#: in this many rows): beyond, the general path (a run of many equal scores).
TIED_PAIRS, ROWS_PER_TIED_PAIR = 1 << 16, 32


def judged_rows(run: Any, judged: Mapping[str, Iterable[str]]) -> tuple[pa.Table, pa.Table] | None:
    """``(rows, counts)`` of a run given as ``{topic: {doc: score}}``: the rows whose docno
    ``judged`` lists under their topic (``{topic: docnos}``, e.g. the qrels' dict) as ``topic, doc,
    score, rank`` (trec_eval's rank among all rows of the topic), and each topic's number of rows
    (``topic, n``; topics with no rows left out, as a table of the run's rows has none). None: not
    a run this path takes (see the module's docstring)."""
    if not isinstance(run, dict) or not run:
        return None
    dicts = list(run.values())
    if not all(map(isinstance, dicts, repeat(dict))):
        return None
    lens = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    n = int(lens.sum())
    if n < max(MIN_ROWS, 1) or "" in run or not one_field_each(run):
        return None
    starts = np.cumsum(lens) - lens
    found = _Found(dicts, lens, starts, list(map(judged.get, run, repeat(()))))
    if not all(found.add(t0, t1) for t0, t1 in _parts(lens)):
        return None
    topic, above, hit, row = found.arrays()
    if len(hit) > max(TIED_PAIRS, n // ROWS_PER_TIED_PAIR):
        return None
    rank = above + 1 + _larger_docnos(hit, row, topic, starts, found.docs, dicts)
    names = pa.array(list(run), pa.string())
    rows = pa.table(
        {
            "topic": names.take(pa.array(topic)),
            "doc": pa.array(found.docs, pa.string()),
            "score": pa.array(np.concatenate([np.zeros(0), *found.scores]), pa.float64()),
            "rank": pa.array(rank.astype(np.int32)),
        }
    )
    some = lens > 0
    return rows, pa.table({"topic": names.filter(pa.array(some)), "n": pa.array(lens[some])})


def _parts(lens: np.ndarray) -> list[tuple[int, int]]:
    """The run's topics in parts of about :data:`ROWS_PER_PART` rows (``(first, end)`` topics; a
    topic longer than that is a part of its own)."""
    ends = np.cumsum(lens)
    cuts = np.searchsorted(ends, np.arange(ROWS_PER_PART, int(ends[-1]), ROWS_PER_PART), side="left") + 1
    bounds = [0, *np.unique(cuts[cuts < len(lens)]).tolist(), len(lens)]
    return list(zip(bounds, bounds[1:]))


class _Found:
    """The judged rows of a run (``dicts``, ``lens`` rows each, the first at ``starts``; each
    topic's judged docnos ``of_topic``) found so far, part by part: each one's topic (its position
    in the run), docno, score, the rows of its topic ranked above it, and the (judged row, row)
    pairs of equal scores where it ties with another row (row: its position in the run)."""

    def __init__(self, dicts: list[dict], lens: np.ndarray, starts: np.ndarray, of_topic: list) -> None:
        self.dicts, self.lens, self.starts, self.of_topic = dicts, lens, starts, of_topic
        self.docs: list[str] = []
        self.scores: list[np.ndarray] = []
        self.topics: list[np.ndarray] = []
        self.above: list[np.ndarray] = []
        self.hit: list[np.ndarray] = []
        self.row: list[np.ndarray] = []

    def add(self, t0: int, t1: int) -> bool:
        """The part of topics ``t0 .. t1 - 1``: its scores converted and its docnos checked, its
        judged rows looked up and ranked: each compared with its topic's scores where they make at
        most :data:`PAIRS_PER_ROW` comparisons per row of the part, else by sorting the part's rows.
        False: the part is not one this path takes."""
        part, counts = self.dicts[t0:t1], self.lens[t0:t1]
        scores = _scores(part, int(counts.sum()))
        if scores is None or not one_field_each(map("".join, part)) or any(map(dict.__contains__, part, repeat(""))):
            return False
        sizes = list(map(len, self.of_topic[t0:t1]))
        docs = list(chain.from_iterable(self.of_topic[t0:t1]))
        values = list(map(dict.get, chain.from_iterable(map(repeat, part, sizes)), docs))
        found = list(map(is_not, values, repeat(None)))
        local = np.repeat(np.arange(t1 - t0, dtype=np.int64), sizes)[np.array(found, dtype=bool)]
        width = int(counts[local].max()) if len(local) else 0
        try:
            own = pa.array(list(compress(values, found)), pa.float64()).to_numpy()
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):  # (as the part's scores: not reached)
            return False
        starts = self.starts[t0:t1] - self.starts[t0]
        if len(local) * width <= PAIRS_PER_ROW * len(scores):
            above, (hit, row) = _ranks(scores, starts[local], counts[local], own, width)
        else:
            above, (hit, row) = _ranks_by_sort(scores, counts, local, own)
        self.hit.append(hit + len(self.docs))
        self.row.append(row + int(self.starts[t0]))
        self.docs += compress(docs, found)
        self.scores.append(own)
        self.topics.append(local + t0)
        self.above.append(above)
        return True

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``topic, above, hit, row`` as arrays (``hit``: the judged row's place among them)."""
        empty = [np.zeros(0, dtype=np.int64)]
        return tuple(np.concatenate(empty + x) for x in (self.topics, self.above, self.hit, self.row))  # type: ignore[return-value]


def _scores(dicts: list[dict], n: int) -> np.ndarray | None:
    """The scores of ``dicts``' rows (``n`` of them), in order, converted by Arrow as
    :func:`evalstore.ingest.sources.run_table` converts them (None: a value Arrow refuses or a score
    that is not finite: the general path says which)."""
    values = chain.from_iterable(map(dict.values, dicts))
    try:
        arr = pa.array(values, pa.float64(), size=n)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, ValueError):
        return None
    if len(arr) != n or arr.null_count:
        return None
    scores = arr.to_numpy()
    return scores if bool(np.isfinite(scores).all()) else None


def one_field_each(strings: Any) -> bool:
    """Every one of ``strings`` is a ``str`` without a blank, tab, line break or control character
    (:func:`evalstore.ingest.sources.no_field_breaker` of their UTF-8 bytes joined: a file's field
    separators); the empty string is not looked for."""
    try:
        return no_field_breaker("".join(strings).encode("utf-8"))
    except (TypeError, UnicodeEncodeError):  # (not a str; a lone surrogate: Arrow refuses it too)
        return False


def _ranks(
    scores: np.ndarray, start: np.ndarray, length: np.ndarray, own: np.ndarray, width: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """For each judged row (its topic's rows are ``scores[start : start + length]``, its score
    ``own``): the rows of its topic with a higher score, and the (judged row, row) pairs of equal
    scores where it ties with another row (its own pair then included). Each judged row meets its
    topic as a window of ``width`` (the longest such topic) scores, :data:`PAIRS_PER_BLOCK`
    comparisons at a time."""
    h = len(start)
    above = np.zeros(h, dtype=np.int64)
    tied_hit, tied_row = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    if h == 0:
        return above, (tied_hit[0], tied_row[0])
    windows = sliding_window_view(np.concatenate((scores, np.zeros(width))), width)  # (the last topic's window too)
    step = max(1, PAIRS_PER_BLOCK // width)
    for a in range(0, h, step):
        b = min(h, a + step)
        block = windows[start[a:b]]
        mine = own[a:b, None]
        higher, equal = block > mine, block == mine
        if not bool((length[a:b] == width).all()):  # (a shorter topic's window holds the next topic's rows)
            inside = np.arange(width)[None, :] < length[a:b, None]
            higher &= inside
            equal &= inside
        above[a:b] = np.count_nonzero(higher, axis=1)
        several = np.flatnonzero(np.count_nonzero(equal, axis=1) > 1)
        if len(several):
            i, column = np.nonzero(equal[several])
            tied_hit.append(a + several[i])
            tied_row.append(start[a + several[i]] + column)
    return above, (np.concatenate(tied_hit), np.concatenate(tied_row))


def _ranks_by_sort(
    scores: np.ndarray, counts: np.ndarray, topic: np.ndarray, own: np.ndarray
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """:func:`_ranks` by one sort of the rows (``counts`` rows in each topic, in order) on the
    integer key (topic, the score's place among the distinct scores, descending): a judged row's
    rows ranked above are those before the first row of its key in its topic's block, its tied
    rows those of its key."""
    distinct = np.unique(scores)  # (-0.0 and 0.0 as one, as == takes them)
    top = len(distinct) - 1
    key = np.repeat(np.arange(len(counts), dtype=np.int64), counts) * len(distinct)
    key += top - np.searchsorted(distinct, scores)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    own_key = topic * len(distinct) + (top - np.searchsorted(distinct, own))
    first = np.searchsorted(ordered, own_key, side="left")
    size = np.searchsorted(ordered, own_key, side="right") - first
    above = first - (np.cumsum(counts) - counts)[topic]
    several = np.flatnonzero(size > 1)
    reps = size[several]
    at = np.repeat(first[several] - (np.cumsum(reps) - reps), reps) + np.arange(int(reps.sum()), dtype=np.int64)
    return above.astype(np.int64), (np.repeat(several, reps), order[at].astype(np.int64))


def _larger_docnos(
    hit: np.ndarray, row: np.ndarray, topic: np.ndarray, starts: np.ndarray, doc: list[str], dicts: list[dict]
) -> np.ndarray:
    """For each judged row, how many of the rows ``row`` paired with it (``hit``) have a larger
    docno (each topic's docnos listed once, for the topics with ties only)."""
    larger = np.zeros(len(topic), dtype=np.int64)
    docnos: dict[int, list[str]] = {}
    for h, r in zip(hit.tolist(), row.tolist()):
        t = int(topic[h])
        keys = docnos.get(t)
        if keys is None:
            keys = docnos[t] = list(dicts[t])
        if keys[r - int(starts[t])] > doc[h]:
            larger[h] += 1
    return larger

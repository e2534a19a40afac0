"""Batches of lists for the vectorised SQL functions: Arrow list columns as flat numpy arrays.

DuckDB hands an Arrow UDF up to 2,048 rows at once; a list argument arrives as a list column,
read here as ``values`` (all the lists' elements, one flat array) and ``offsets`` (list i is
``values[offsets[i]:offsets[i + 1]]``), without a Python object per element or per list. The
statistics of the preference metrics are then computed for every list of the batch at once:

* :func:`pair_counts` — the pair counts of :func:`evalstore.stats.rank_correlation.pair_counts` per list, by
  :func:`evalstore.stats.rank_correlation.list_pair_counts` for the whole batch (in slices of bounded size): one
  ordering by (list, system value, user value), which the metric SQL hands over already
  (``list(s ORDER BY s, u)``), tied pairs from runs of equal values, discordant pairs as
  inversions (O(n log G), O(n) memory).
* :func:`spearman_rho` — average ranks per list (exact: half-integers), Pearson's r of them.

The integer counts are the per-list function's, so NDPM and Kendall's tau-b are bit-identical to
it; Spearman's sums are exact in float64, so rho is too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..stats import rank_correlation


def chunk(arr: pa.ChunkedArray | pa.Array) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def valid(arr: pa.Array) -> np.ndarray:
    """True where the row's value is not NULL."""
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def lists(
    arr: pa.ChunkedArray | pa.Array, keep: np.ndarray | None = None, dtype=np.float64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, offsets, valid)`` of a list column; a NULL list, and a row where ``keep`` is
    False, read as empty; a NULL element reads as NaN."""
    a = chunk(arr)
    ok = valid(a)
    if keep is not None:
        ok = ok & keep
    offsets = a.offsets.to_numpy().astype(np.int64)
    if not ok.all():  # a NULL list's offsets may span elements: make it empty
        lens = np.where(ok, np.diff(offsets), 0)
        starts = offsets[:-1][ok]
        child = a.values
        pieces = [child.slice(int(s), int(n)) for s, n in zip(starts, lens[ok], strict=True)]
        flat = pa.concat_arrays(pieces) if pieces else child.slice(0, 0)
        offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    else:
        flat = a.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        offsets = offsets - offsets[0]
    if flat.null_count:
        values = flat.to_numpy(zero_copy_only=False).astype(np.float64)
    else:
        values = flat.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return values, offsets, ok


def all_valid(*arrs: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """True where no argument of the row is NULL."""
    ok = valid(chunk(arrs[0]))
    for a in arrs[1:]:
        ok = ok & valid(chunk(a))
    return ok


def scalars(arr: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(values, valid)`` of a scalar column (NULLs read as 0)."""
    a = chunk(arr)
    return a.fill_null(0).to_numpy(zero_copy_only=False), valid(a)


def column(values: np.ndarray, ok: np.ndarray) -> pa.Array:
    """A DOUBLE column, NULL where ``ok`` is False."""
    return pa.array(values, type=pa.float64(), mask=~ok)


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    lens = np.diff(offsets)
    return np.repeat(np.arange(len(lens)), lens)


def sort_within(seg: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A permutation ordering the elements by (list, value); equal values of a list in any order
    (every use reads only runs of equal values). One unstable argsort of the values, then a stable
    sort by list number (a radix sort for 16-bit keys) instead of a lexsort's several stable passes."""
    o = np.argsort(x)
    if len(seg) and int(seg[-1]) < 2**15:
        return o[np.argsort(seg[o].astype(np.int16), kind="stable")]
    return o[np.argsort(seg[o], kind="stable")]


def list_sums(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per list, the sum of its elements (integers: exact; empty lists sum to 0)."""
    lens = np.diff(offsets)
    out = np.zeros(len(lens), dtype=x.dtype)
    nz = lens > 0
    if nz.any():
        out[nz] = np.add.reduceat(x, offsets[:-1][nz])
    return out


#: Elements of a batch's lists counted at once (whole lists): the work's memory stays a few
#: arrays of this length however many elements DuckDB hands over.
PAIR_CHUNK = 1 << 20


def run_starts(new_run: np.ndarray) -> np.ndarray:
    """For each element, the position where its run of equal values starts (``new_run``: a run starts
    here; true at 0). Each start repeated over its run: no cumulative sum of the flags (10 M
    elements: 0.03 against 0.25 CPU-s)."""
    starts = np.flatnonzero(new_run)
    return np.repeat(starts, np.diff(np.append(starts, len(new_run))))


def pair_counts(s: np.ndarray, u: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`evalstore.stats.rank_correlation.pair_counts` of every list of a batch (arrays of length m), by
    :func:`evalstore.stats.rank_correlation.list_pair_counts` over slices of about :data:`PAIR_CHUNK` elements;
    the user's values are coded by hashing (Arrow), not by a sort. Lists that come ordered by
    (system value, user value), as the metric SQL hands them, are not sorted again."""
    if np.isnan(s).any() or np.isnan(u).any():
        raise ValueError("system and user values must not be NaN (use -inf for 'ranked last')")
    codes, n_u = user_codes(u)
    m = len(offsets) - 1
    out = {k: np.zeros(m, dtype=np.int64) for k in ("n0", "ties_s", "ties_u", "ties_both", "discordant", "concordant")}
    i = 0
    while i < m:
        # whole lists up to PAIR_CHUNK elements (at least one list)
        j = min(m, max(i + 1, int(np.searchsorted(offsets, offsets[i] + PAIR_CHUNK, side="right")) - 1))
        a, b = int(offsets[i]), int(offsets[j])
        c = rank_correlation.list_pair_counts(s[a:b], codes[a:b], n_u, offsets[i : j + 1] - a)
        for k, v in c.items():
            out[k][i:j] = v
        i = j
    return out


def user_codes(u: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes of the values in value order (:func:`evalstore.stats.rank_correlation.dense_codes`): the
    distinct values found by hashing, then each value's position among them (a binary search in a
    few values, instead of a sort of all of them)."""
    import pyarrow.compute as pc  # here: importing it takes a tenth of a second, which every command paid

    u = u + 0.0  # -0.0 -> 0.0: equal values hash alike
    vals = np.sort(pc.unique(pa.array(u)).to_numpy(zero_copy_only=False))
    return np.searchsorted(vals, u).astype(np.int64), len(vals)


def average_ranks(x: np.ndarray, seg: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata`` (average ranks, 1-based) within each list."""
    n = len(x)
    order = sort_within(seg, x)
    xs = x[order]
    new = np.ones(n, dtype=bool)
    new[1:] = xs[1:] != xs[:-1]
    new[offsets[:-1][np.diff(offsets) > 0]] = True
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    pos0 = starts - offsets[seg[starts]]  # 0-based position of the run's first element in its list
    avg = pos0 + (ends - starts + 1) / 2.0  # mean of the 1-based positions pos0+1 .. pos0+size
    ranks = np.empty(n)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks


def spearman_rho(x: np.ndarray, y: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rho, defined)`` per list: :func:`evalstore.stats.rank_correlation.spearman_rho` (undefined for fewer
    than two elements or when a side is all ties; NaN when a list holds NaN)."""
    m = len(offsets) - 1
    lens = np.diff(offsets)
    seg = segment_ids(offsets)
    if len(x) != len(y):
        raise ValueError(f"the two lists differ in length ({len(x)} vs {len(y)})")
    rx = average_ranks(x, seg, offsets)
    ry = average_ranks(y, seg, offsets)
    mean = (lens + 1) / 2.0  # the mean of average ranks, exactly
    rx -= mean[seg]
    ry -= mean[seg]
    sums = _seg_sums(np.stack((rx * ry, rx * rx, ry * ry)), offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = sums[0] / np.sqrt(sums[1] * sums[2])
    has_nan = np.bincount(seg, weights=np.isnan(x) | np.isnan(y), minlength=m) > 0
    rho[has_nan] = np.nan
    defined = (lens >= 2) & (has_nan | (sums[1] * sums[2] != 0))
    return rho, defined


def _seg_sums(a: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sums along the last axis per list (empty lists sum to 0)."""
    lens = np.diff(offsets)
    out = np.zeros(a.shape[:-1] + (len(lens),))
    nz = lens > 0
    if nz.any():
        out[..., nz] = np.add.reduceat(a, offsets[:-1][nz], axis=-1)
    return out


def same_lengths(name: str, offsets: Sequence[np.ndarray]) -> None:
    first = np.diff(offsets[0])
    for o in offsets[1:]:
        other = np.diff(o)
        if not np.array_equal(first, other):
            i = int(np.flatnonzero(first != other)[0])
            raise ValueError(f"{name}: the lists of a row differ in length ({first[i]} and {other[i]})")


def sums_like_numpy(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per list, the sum ``x[a:b].sum()`` gives, bit for bit: numpy adds a contiguous float64
    array pairwise (eight running sums over blocks of eight, combined as
    ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``, then the last n % 8 elements one by one; arrays
    longer than 128 are split in halves first). Lists of up to 128 elements are summed that way
    for the whole batch (adding the zeros of the padding changes no sum); longer ones one by one."""
    lens = np.diff(offsets)
    m = len(lens)
    out = np.zeros(m)
    if len(x) == 0:
        return out
    seg = segment_ids(offsets)
    pos = np.arange(len(x)) - offsets[seg]
    small = lens <= 128
    main = lens - lens % 8
    take = small[seg]
    in_main = take & (pos < main[seg])
    blocks = max(1, int(main[small].max(initial=0)) // 8)
    A = np.zeros((blocks, m, 8))
    A[pos[in_main] // 8, seg[in_main], pos[in_main] % 8] = x[in_main]
    r = A[0].copy()
    for k in range(1, blocks):
        r += A[k]
    res = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + ((r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7]))
    rest = take & ~in_main
    R = np.zeros((7, m))
    R[(pos - main[seg])[rest], seg[rest]] = x[rest]
    for c in range(7):
        res += R[c]
    out[small] = res[small]
    for i in np.flatnonzero(~small):
        out[i] = x[offsets[i] : offsets[i + 1]].sum()
    return out

"""Batches of lists for the vectorised SQL functions: Arrow list columns as flat numpy arrays.

DuckDB hands an Arrow UDF up to 2,048 rows at once; a list argument arrives as a list column,
read here as ``values`` (all the lists' elements, one flat array) and ``offsets`` (list i is
``values[offsets[i]:offsets[i + 1]]``), without a Python object per element or per list. The
statistics of the preference metrics are then computed for every list of the batch at once:

* :func:`pair_counts` — the pair counts of :func:`evalstore.stats.rank_correlation.pair_counts` per list, from
  one sort of the batch by (list, system value, user value): tied pairs from the sizes of runs of
  equal values, discordant pairs from a running count per user-value group (O(n G), G = number of
  distinct user values in the batch, <= relevance levels + 1 for qrels data; a batch with more
  than 64 falls back to the per-list rule).
* :func:`spearman_rho` — average ranks per list (exact: half-integers), Pearson's r of them.

The integer counts are the per-list function's, so NDPM and Kendall's tau-b are bit-identical to
it; Spearman's sums are exact in float64, so rho is too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..stats import rank_correlation

_ONEHOT_MAX_GROUPS = 64


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


def dense_ranks(x: np.ndarray) -> np.ndarray:
    """0-based dense ranks of the values (equal values, equal ranks): a binary search in the
    distinct values when they are few, else from one argsort."""
    vals = np.unique(x)
    if len(vals) <= _ONEHOT_MAX_GROUPS:
        return np.searchsorted(vals, x).astype(np.int64)
    o = np.argsort(x)
    xs = x[o]
    d = np.empty(len(x), dtype=np.int64)
    d[o] = np.concatenate(([0], np.cumsum(xs[1:] != xs[:-1])))
    return d


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


def run_starts(new_run: np.ndarray) -> np.ndarray:
    """For each element, the position where its run of equal values starts."""
    return np.flatnonzero(new_run)[np.cumsum(new_run) - 1]


def pair_counts(s: np.ndarray, u: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`evalstore.stats.rank_correlation.pair_counts` of every list of a batch (arrays of length m)."""
    if np.isnan(s).any() or np.isnan(u).any():
        raise ValueError("system and user values must not be NaN (use -inf for 'ranked last')")
    m = len(offsets) - 1
    lens = np.diff(offsets)
    n0 = lens * (lens - 1) // 2
    seg = segment_ids(offsets)
    n = len(s)
    if n == 0:
        z = np.zeros(m, dtype=np.int64)
        return {"n0": n0, "ties_s": z, "ties_u": z, "ties_both": z, "discordant": z, "concordant": z}
    u_idx = dense_ranks(u)
    n_u = int(u_idx.max()) + 1
    if n_u > _ONEHOT_MAX_GROUPS:  # many distinct user values in the batch: the per-list rule
        return _per_list(s, u, offsets)
    seg_start = np.zeros(n, dtype=bool)
    seg_start[offsets[:-1][lens > 0]] = True
    per_u = np.bincount(seg * n_u + u_idx, minlength=m * n_u).reshape(m, n_u)
    ties_u = (per_u * (per_u - 1) // 2).sum(axis=1)
    order = sort_within(seg, s)  # per list by system value
    ss, gs = s[order], u_idx[order]
    new_s = seg_start | np.concatenate(([True], ss[1:] != ss[:-1]))
    run_start = run_starts(new_s)
    ties_s = list_sums(np.arange(n) - run_start, offsets)
    # pairs tied by both: per run of equal system values, pairs of equal user values
    run_id = np.cumsum(new_s) - 1
    per_run = np.bincount(run_id * n_u + gs, minlength=(int(run_id[-1]) + 1) * n_u).reshape(-1, n_u)
    both_per_run = (per_run * (per_run - 1) // 2).sum(axis=1)
    ties_both = list_sums(both_per_run, np.concatenate(([0], np.cumsum(new_s)))[offsets])
    disc = _discordant(run_start, gs, offsets[seg], n_u, offsets)
    conc = n0 - ties_s - ties_u + ties_both - disc
    return {
        "n0": n0,
        "ties_s": ties_s,
        "ties_u": ties_u,
        "ties_both": ties_both,
        "discordant": disc,
        "concordant": conc,
    }


def _per_list(s: np.ndarray, u: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    counts = [rank_correlation.pair_counts(s[a:b], u[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    return {k: np.array([c[k] for c in counts], dtype=np.int64) for k in _KEYS}


_KEYS = ("n0", "ties_s", "ties_u", "ties_both", "discordant", "concordant")


def _discordant(
    run_start: np.ndarray, gs: np.ndarray, list_start: np.ndarray, n_groups: int, offsets: np.ndarray
) -> np.ndarray:
    """Pairs of a list with system value i < j and user group g_i > g_j, the documents sorted per
    list by system value: for document j, those of its list strictly below its run of equal
    system values whose group is above g_j (a running count of ``group > g`` per g)."""
    n = len(gs)
    disc = np.zeros(n, dtype=np.int64)
    cum = np.zeros(n + 1, dtype=np.int64)
    for g in range(n_groups - 1):  # nothing is above the top group
        np.cumsum(gs > g, out=cum[1:])
        j = np.flatnonzero(gs == g)
        disc[j] = cum[run_start[j]] - cum[list_start[j]]
    return list_sums(disc, offsets)


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

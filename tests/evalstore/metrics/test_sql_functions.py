"""The vectorised SQL functions give, list by list, the values of the per-list rules.

NDPM and Kendall's tau-b from :func:`evalstore.stats.rank_correlation.pair_counts`, Spearman's rho from
:func:`evalstore.stats.rank_correlation.spearman_rho`, P+ from the per-list definition below (Sakai's Eq. 7 as
the function computed it before it was vectorised); compared with ``==``: the batch computation is
exact where the per-list one is (integer pair counts, half-integer ranks) and adds floats in the
same order elsewhere. Batches mix lengths 0..300, ties, NULL rows and -inf values.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from evalstore.metrics import udf_graded, udf_lists
from evalstore.metrics import udf_tests as meta_udfs  # noqa: F401  (declares the meta functions)
from evalstore.metrics.sql_functions import register as register_udfs
from evalstore.stats import rank_correlation


def _random_lists(rng, m, levels=4, max_len=300):
    s_lists, u_lists = [], []
    for i in range(m):
        n = int(rng.integers(0, max_len)) if i > 3 else [0, 1, 2, 129][i]
        s = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # rounding makes ties
        u = rng.integers(0, levels, size=n).astype(float)
        if n and rng.random() < 0.2:
            u[rng.random(n) < 0.3] = -np.inf
        s_lists.append(s.tolist())
        u_lists.append(u.tolist())
    return s_lists, u_lists


def _ref_ndpm(s, u):
    c = rank_correlation.pair_counts(s, u)
    strict = c["n0"] - c["ties_u"]
    return None if strict == 0 else (2 * c["discordant"] + c["ties_s"] - c["ties_both"]) / (2 * strict)


@pytest.mark.parametrize("levels", [1, 2, 5, 80])  # 80: more groups than the one-hot rule takes
def test_preference_functions_equal_the_per_list_rules(levels):
    rng = np.random.default_rng(levels)
    s_lists, u_lists = _random_lists(rng, 200, levels)
    s_lists[7] = None  # a NULL row gives NULL
    s_arr = pa.array(s_lists, type=pa.list_(pa.float64()))
    u_arr = pa.array(u_lists, type=pa.list_(pa.float64()))
    got = {
        "ndpm": udf_graded.ndpm(s_arr, u_arr).to_pylist(),
        "tau": udf_graded.kendall_tau_b(s_arr, u_arr).to_pylist(),
        "rho": udf_graded.spearman_rho(s_arr, u_arr).to_pylist(),
    }
    for i, (s, u) in enumerate(zip(s_lists, u_lists, strict=True)):
        if s is None:
            assert got["ndpm"][i] is None and got["tau"][i] is None and got["rho"][i] is None
            continue
        assert got["ndpm"][i] == _ref_ndpm(s, u), i
        assert got["tau"][i] == rank_correlation.kendall_tau_b(s, u), i
        assert got["rho"][i] == rank_correlation.spearman_rho(s, u), i


def _ref_pplus(ranks, levels, gains, ideal_gains, beta):
    r = np.asarray(ranks, dtype=float)
    lv = np.asarray(levels, dtype=np.int64)
    g = np.asarray(gains, dtype=float)
    order = np.argsort(r, kind="stable")
    r, lv, g = r[order], lv[order], g[order]
    rel = lv >= 1
    if not rel.any():
        return 0.0
    r_p = r[rel & (lv == lv[rel].max())].min()
    ideal = np.sort(np.asarray(ideal_gains, dtype=float))[::-1]
    cg_ideal = np.cumsum(ideal[ideal > 0])
    sel = rel & (r <= r_p)
    rr = r[sel]
    cgi = cg_ideal[np.minimum(rr.astype(np.int64), len(cg_ideal)) - 1] if len(cg_ideal) else np.zeros(len(rr))
    return float(((beta * np.cumsum(g)[sel] + np.cumsum(rel)[sel]) / (beta * cgi + rr)).mean())


def test_pplus_equals_the_per_list_definition():
    rng = np.random.default_rng(3)
    rows = []
    for i in range(300):
        n = int(rng.integers(0, 200)) if i > 2 else [0, 1, 150][i]
        ranks = (rng.permutation(1000)[:n] + 1).tolist()
        levels = rng.integers(0, 4, size=n).tolist()
        gains = [lv * rng.choice([0.7, 1.0, 2.5]) for lv in levels]
        ideal = (rng.integers(0, 4, size=int(rng.integers(0, 60))) * 1.3).tolist()
        rows.append((ranks, levels, gains, ideal, float(rng.choice([0.5, 1.0, 2.0]))))
    rows[5] = (rows[5][0], rows[5][1], rows[5][2], rows[5][3], None)
    cols = list(zip(*rows, strict=True))
    got = udf_graded.pplus_measure(
        pa.array(cols[0], type=pa.list_(pa.int64())),
        pa.array(cols[1], type=pa.list_(pa.int64())),
        pa.array(cols[2], type=pa.list_(pa.float64())),
        pa.array(cols[3], type=pa.list_(pa.float64())),
        pa.array(cols[4], type=pa.float64()),
    ).to_pylist()
    for i, row in enumerate(rows):
        assert got[i] == (None if row[4] is None else _ref_pplus(*row)), i


def test_sums_like_numpy_is_ndarray_sum():
    rng = np.random.default_rng(0)
    lens = rng.integers(0, 300, size=500)
    off = np.concatenate(([0], np.cumsum(lens)))
    x = rng.random(off[-1]) * rng.choice([1e-3, 1.0, 1e5], size=off[-1])
    ref = [x[a:b].sum() for a, b in zip(off[:-1], off[1:], strict=True)]
    assert udf_lists.sums_like_numpy(x, off).tolist() == ref


def test_called_once_per_batch_from_sql():
    con = duckdb.connect()
    register_udfs(con)
    got = con.sql(
        """SELECT i, ndpm(list(s ORDER BY j), list(u ORDER BY j)), spearman_rho(list(s ORDER BY j), list(u ORDER BY j))
           FROM (SELECT i, j, ((j * 7919) % 13)::DOUBLE AS s, (j % 3)::DOUBLE AS u
                 FROM range(3000) a(i), range(1, 40) b(j) WHERE j <= 3 + i % 30)
           GROUP BY i ORDER BY i"""
    ).fetchall()
    assert len(got) == 3000
    for i, nd, rho in got[:40]:
        n = 3 + i % 30
        s = [float((j * 7919) % 13) for j in range(1, n + 1)]
        u = [float(j % 3) for j in range(1, n + 1)]
        assert nd == _ref_ndpm(s, u)
        assert rho == rank_correlation.spearman_rho(s, u)


def test_mismatched_lists_are_an_error():
    con = duckdb.connect()
    register_udfs(con)
    with pytest.raises(Exception, match="differ in length"):
        con.sql("SELECT ndpm([1.0, 2.0], [1.0])").fetchall()
    assert con.sql("SELECT kendall_tau_b(NULL, [1.0]), ndpm([1.0], [2.0])").fetchall() == [(None, None)]
    assert con.sql("SELECT spearman_rho([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])").fetchall() == [(0.5,)]


def test_kendall_tau_b_of_long_lists_does_not_overflow():
    """(n0 - ties) products pass 2**63 from about 65,000 documents a list: taken in floating point."""
    rng = np.random.default_rng(11)
    s, u = rng.random(100_000), np.floor(rng.random(100_000) * 50)
    got = udf_graded.kendall_tau_b(pa.array([s.tolist()]), pa.array([u.tolist()])).to_pylist()[0]
    assert got == rank_correlation.kendall_tau_b(s, u)
    nd = udf_graded.ndpm(pa.array([s.tolist()]), pa.array([u.tolist()])).to_pylist()[0]
    c = rank_correlation.pair_counts(s, u)
    assert nd == (2 * c["discordant"] + c["ties_s"] - c["ties_both"]) / (2 * (c["n0"] - c["ties_u"]))


def test_pair_counts_with_many_values_on_both_sides_equal_a_brute_count():
    """The inversions are counted by a radix partition whatever the number of distinct values (the
    one-hot count took n x G memory: 4.4 GB for 4 M elements)."""
    rng = np.random.default_rng(12)
    for n in (0, 1, 2, 37, 300):
        s = np.round(rng.random(n) * rng.choice([3, 1000]), 1)
        u = np.round(rng.random(n) * rng.choice([2, 1000]), 1)
        c = rank_correlation.pair_counts(s, u)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        assert c["discordant"] == sum((s[i] - s[j]) * (u[i] - u[j]) < 0 for i, j in pairs)
        assert c["concordant"] == sum((s[i] - s[j]) * (u[i] - u[j]) > 0 for i, j in pairs)
        assert c["ties_both"] == sum(s[i] == s[j] and u[i] == u[j] for i, j in pairs)

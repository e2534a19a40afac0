"""exact_sums: a Python measure's sums, bit for bit the SQL blocks' exact_sum."""

from __future__ import annotations

import duckdb
import numpy as np

from evalstore.metrics.user.sums import exact_sums


def test_exact_sums_equal_the_sql_exact_sum_bit_for_bit():
    rng = np.random.default_rng(7)
    # terms of every size, halves at the 24th decimal (rounded away from zero, as DuckDB rounds) and negatives
    x = np.concatenate([rng.random(20000) * 3, 1 / np.log2(np.arange(2, 3000) + 1.0), rng.random(2000) * 1e-9,
                        -rng.random(500), [3.964601886879082e-09, 0.5e-24, 2.5e-24]])  # fmt: skip
    groups = rng.integers(0, 400, len(x))
    sql = ("SELECT g, CAST(sum(CAST(x AS DECIMAL(38, 24))) AS DOUBLE) FROM "
           "(SELECT unnest(?::DOUBLE[]) AS x, unnest(?::BIGINT[]) AS g) GROUP BY g")  # fmt: skip
    ref = dict(duckdb.connect().execute(sql, [x.tolist(), groups.tolist()]).fetchall())
    got = exact_sums(x, groups, 400)
    assert [got[g] for g in range(400)] == [ref.get(g, 0.0) for g in range(400)]
    assert exact_sums([], [], 2).tolist() == [0.0, 0.0]

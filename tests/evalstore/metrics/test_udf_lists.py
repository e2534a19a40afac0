"""evalstore/metrics/udf_lists.py: helpers over the lists DuckDB hands the list UDFs."""

from __future__ import annotations

import numpy as np

from evalstore.metrics.udf_lists import run_starts


def test_run_starts_is_each_elements_run_start():
    rng = np.random.default_rng(0)
    for _ in range(100):
        groups = np.sort(rng.integers(0, 5, int(rng.integers(1, 40))))
        new_run = np.concatenate(([True], groups[1:] != groups[:-1]))
        expected = [max(j for j in range(i + 1) if new_run[j]) for i in range(len(groups))]
        assert run_starts(new_run).tolist() == expected
    assert run_starts(np.zeros(0, dtype=bool)).tolist() == []

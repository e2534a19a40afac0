"""The default memory budget (evalstore/db/connection.py) and chunked evaluation
(evalstore/evaluation/incremental.py): the working set stays the same size however many runs are evaluated."""

from __future__ import annotations

import os

from support import SAMPLE

import evalstore
from evalstore.base.memory_limit import default_memory_limit
from evalstore.db.connection import spill_directory
from evalstore.evaluation import incremental


def _mb(setting: str) -> float:
    value, unit = setting.split()
    return float(value) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]


def test_default_budget_is_per_thread_and_capped():
    ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    cap = max(64, min(ram_mb // 4, 4096))
    assert default_memory_limit(1) == default_memory_limit(2) == f"{min(512, cap)}MB"
    assert default_memory_limit(8) == f"{min(1024, cap)}MB"
    assert default_memory_limit(1000) == f"{cap}MB"


def test_a_store_opens_with_the_budget_and_an_own_spill_folder():
    with evalstore.open(":memory:", threads=2) as s:
        limit, temp = s.sql("SELECT current_setting('memory_limit'), current_setting('temp_directory')").rows[0]
        assert abs(_mb(limit) - int(default_memory_limit(2)[:-2]) * 1e6 / 2**20) < 0.1  # 512MB shows as 488.2 MiB
        assert temp == spill_directory() and str(os.getpid()) in temp
    with evalstore.open(":memory:", memory_limit="1GB") as s:
        assert abs(_mb(s.sql("SELECT current_setting('memory_limit')").rows[0][0]) - 1e9 / 2**20) < 0.1


def test_chunked_evaluation_gives_the_same_scores(store, monkeypatch):
    # metrics whose per-topic value is a count ratio: bit-identical however the rows are split
    # (nDCG's and AP's sums are not taken in rank order: their last bit can differ between runs)
    store.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    store.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
    whole = store.evaluate("sample", None, ["P@10", "RR", "R@5"], save=False)
    jobs = []
    original = incremental.chunked

    def spy(con, plan, max_lines):
        out = original(con, plan, 1)  # one run per job
        jobs.append(len(out.jobs))
        return out

    monkeypatch.setattr(incremental, "chunked", spy)
    chunked = store.evaluate("sample", None, ["P@10", "RR", "R@5"], save=False)
    assert jobs == [6]
    assert chunked.per_topic == whole.per_topic and chunked.means == whole.means

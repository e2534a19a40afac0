"""Fault injection: an ingest killed (SIGKILL) at several moments leaves the store whole, holding
either the old state or the complete new run, and a retry succeeds."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from support import SAMPLE

import evalstore


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_sigkill_during_ingest_leaves_the_store_whole(tmp_path):
    rnd = random.Random(3)
    big = tmp_path / "big.run"
    n_lines = 400_000
    with big.open("w") as f:
        for i in range(n_lines):
            f.write(f"t{i % 50} Q0 d{i} {i} {rnd.random():.6f} bigrun\n")
    db = tmp_path / "store.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt"))[:2], progress=False)
        old_runs = sorted(s.run_names())
    env = {**os.environ, "EVALSTORE_DB": str(db)}
    survived = 0
    for delay in (0.05, 0.2, 0.4, 0.8, 1.5):
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalstore", "ingest", "run", str(big)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        with evalstore.open(db) as s:  # opens (and checks the metadata) after every kill
            runs = sorted(s.run_names())
            assert runs in (old_runs, sorted([*old_runs, "bigrun"]))
            if "bigrun" in runs:  # all or nothing: the run is complete
                assert s.sql("SELECT count(*) FROM run_rows WHERE run = 'bigrun'").rows[0][0] == n_lines
                s.sql("DELETE FROM run_row_data WHERE run_id = (SELECT run_id FROM run_meta WHERE name = 'bigrun')",
                      write=True)  # fmt: skip
                s.sql("DELETE FROM run_meta WHERE name = 'bigrun'", write=True)
            assert s.sql("SELECT count(*) FROM run_rows").rows[0][0] > 0
        survived += 1
    r = subprocess.run([sys.executable, "-m", "evalstore", "ingest", "run", str(big)], env=env, capture_output=True)
    assert r.returncode == 0, r.stderr
    with evalstore.open(db) as s:
        assert s.sql("SELECT count(*) FROM run_rows WHERE run = 'bigrun'").rows[0][0] == n_lines
    assert survived == 5

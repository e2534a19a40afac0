"""The console script's start (evalstore/entry.py): the process-wide settings it makes before the
command line imports numpy, pyarrow or DuckDB."""

from __future__ import annotations

import os
import subprocess
import sys

from support import ROOT

#: a command line run as the console script runs it, then what the process holds
PROBE = """
import os, sys
sys.argv = ["evalstore", "metrics", "--format", "csv"]
from evalstore.entry import main
try:
    main()
except SystemExit:
    pass
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), os.environ.get("ARROW_DEFAULT_MEMORY_POOL"), file=sys.stderr)
"""


def _settings(env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, env=env, check=True, timeout=120
    )
    return out.stderr.split()[-2:]


def test_openblas_threads_sleep_when_idle_unless_the_user_says_otherwise():
    """OpenBLAS's idle threads spin ~0.1 s each before sleeping (import numpy: 0.2 CPU-s instead of
    0.1 on 2 cores); the command line sets their timeout short, and a user's own setting wins."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "ARROW_DEFAULT_MEMORY_POOL")}
    timeout, pool = _settings(env)
    assert timeout == "4"
    assert pool == ("jemalloc" if sys.platform.startswith("linux") else "None")
    assert _settings({**env, "OPENBLAS_THREAD_TIMEOUT": "28"})[0] == "28"

"""nuggetizer's ``calculate_nugget_scores``, the definition evalstore's nugget metrics reproduce.

nuggetizer (castorini/nuggetizer) is not a test dependency: its PyPI package requires openai,
tiktoken, requests, tqdm and python-dotenv for its LLM calls, which the scoring function never uses
(``nuggetizer/core/metrics.py`` imports only the standard library). So the tests compare with it in
two ways:

* :func:`restated`: its definition, restated from the source of nuggetizer 0.0.5 (PyPI, the same
  in castorini/nuggetizer's main branch at 0.0.6): always run;
* :func:`nuggetizer_metrics`: nuggetizer's own module: imported when installed, else installed
  once with ``pip install --no-deps nuggetizer==0.0.5`` into a temporary folder and loaded from
  its file (nothing else of nuggetizer is imported, no dependency is installed); None when pip
  cannot reach PyPI, and the tests that need it skip with that reason. Those tests also check that
  :func:`restated` agrees with it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

#: the nuggetizer release the tests compare with
VERSION = "0.0.5"


def restated(qid: str, nuggets: list[dict]) -> dict:
    """``calculate_nugget_scores(qid, nuggets)`` of nuggetizer 0.0.5 as a dict of its fields."""
    vital = [n for n in nuggets if n["importance"] == "vital"]
    strict_vital = sum(1 for n in vital if n["assignment"] == "support")
    strict_all = sum(1 for n in nuggets if n["assignment"] == "support")
    vital_sum = strict_vital + sum(0.5 for n in vital if n["assignment"] == "partial_support")
    all_sum = strict_all + sum(0.5 for n in nuggets if n["assignment"] == "partial_support")
    return {
        "qid": qid,
        "strict_vital_score": strict_vital / len(vital) if vital else 0.0,
        "strict_all_score": strict_all / len(nuggets) if nuggets else 0.0,
        "vital_score": vital_sum / len(vital) if vital else 0.0,
        "all_score": all_sum / len(nuggets) if nuggets else 0.0,
    }


def nuggetizer_metrics(folder: Path) -> ModuleType | str:
    """nuggetizer's ``nuggetizer.core.metrics`` module, or why it is not available."""
    try:  # installed (pip install --no-deps nuggetizer): by name, as it is no declared dependency
        return importlib.import_module("nuggetizer.core.metrics")
    except ImportError:
        pass
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-cache-dir", "--target", str(folder),
           f"nuggetizer=={VERSION}"]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"pip could not install nuggetizer {VERSION}: {e}"
    path = folder / "nuggetizer" / "core" / "metrics.py"
    if done.returncode or not path.is_file():
        return f"pip could not install nuggetizer {VERSION} (no network?): {done.stderr.strip()[-300:]}"
    spec = importlib.util.spec_from_file_location("nuggetizer_core_metrics", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module

"""Whether what :func:`evalstore.evaluate` is given as runs are generated answers (TREC RAG) rather
than ranked lists: :func:`answer_lines`, asked of every call before anything is read. What is done
with answers is :mod:`.answers` (a store in memory and four ingests), loaded only when there are
some: the ranked lists' path (``evalstore eval QRELS RUN``) does without it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..ingest.files import first_content_line


def answer_lines(runs: Any, run_name: str = "run") -> list[dict] | str | None:
    """The answers in ``runs`` (a list of answer dicts, ``{run: [answers]}``, or a path of JSON lines
    of answers), or None when ``runs`` holds ranked lists."""
    if isinstance(runs, (str, os.PathLike)):
        return str(runs) if first_json(Path(runs), "answer") else None
    if isinstance(runs, Mapping) and runs and all(_answers(v) for v in runs.values()):
        return [{**a, "run_id": str(name)} for name, answers in runs.items() for a in answers]
    if _answers(runs):
        return [a if "run_id" in a else {**a, "run_id": run_name} for a in runs]
    return None


def _answers(x: Any) -> bool:
    return (
        isinstance(x, Sequence)
        and not isinstance(x, str)
        and bool(x)
        and isinstance(x[0], Mapping)
        and ("answer" in x[0])
    )


def first_json(path: Path, key: str) -> bool:
    """The file is JSON lines whose first object has ``key``."""
    try:
        line = first_content_line(path)
        return line is not None and line.lstrip().startswith("{") and key in json.loads(line)
    except (OSError, ValueError):
        return False

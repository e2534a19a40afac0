"""SQL files of measures of one's own (``--measures FILE.sql``): one measure named after the file
(``mine.sql`` defines ``mine``), or several, each after a ``-- @measure NAME`` line."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ...errors import MetricError
from ..registry import register_user
from . import define, spec_of

_MARK = re.compile(r"^--\s*@measure\s+(\S+)\s*$", re.M)


def read_file(path: str | os.PathLike) -> list[tuple[str, str]]:
    """``(name, SQL)`` of each measure a file defines."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise MetricError(f"cannot read the measures file {p}: {e}") from None
    marks = list(_MARK.finditer(text))
    if not marks:
        name = p.name.split(".")[0]
        return [(name, text)]
    if text[: marks[0].start()].strip() and not all(
        line.strip().startswith("--") for line in text[: marks[0].start()].splitlines() if line.strip()
    ):
        raise MetricError(f"{p}: SQL before the first '-- @measure NAME' line")
    return [
        (m.group(1), text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)])
        for i, m in enumerate(marks)
    ]


def register_files(paths: Sequence[str | os.PathLike]) -> list[str]:
    """Register the measures of SQL files for this process; their names."""
    names = []
    for path in paths:
        for name, sql in read_file(path):
            try:
                register_user(spec_of(define(name, sql=sql, source=os.path.basename(os.fspath(path)))))
            except MetricError as e:
                raise MetricError(f"{path}: {e}") from None
            names.append(name)
    return names

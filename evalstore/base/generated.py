"""Documents generated from the code (docs/metrics.md from the metric registry, docs/cli.md from the
command line): one rule to write them, and to check in ``tools/check`` that they are up to date."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

#: The docs folder of a source checkout.
DOCS = Path(__file__).resolve().parents[2] / "docs"


def main(path: Path, text: Callable[[], str], command: str, argv: list[str] | None = None) -> int:
    """``python -m ...`` of a generated document: write ``path`` from ``text()``, or with
    ``--check`` exit 1 (naming ``command``) when the file differs from what the code generates."""
    parser = argparse.ArgumentParser(description=f"Write or check {path.name}.")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {path.name} is not up to date")
    args = parser.parse_args(argv)
    body = text()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != body:
            print(f"{path} is out of date: run `{command}`", file=sys.stderr)
            return 1
        return 0
    path.write_text(body, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return 0

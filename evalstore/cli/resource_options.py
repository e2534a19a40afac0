"""The resource options of the command being run (--memory-limit, --threads, --temp-dir, --wait):
set when its options are parsed, read when it opens the store."""

from __future__ import annotations

from dataclasses import dataclass

import typer

from ..errors import StoreError
from ..memory_limit import check_memory_limit


@dataclass
class Resources:
    memory_limit: str | None = None
    threads: int | None = None
    temp_dir: str | None = None
    wait: float = 0.0


CURRENT = Resources()


def use(memory_limit: str | None, threads: int | None, temp_dir: str | None, wait: float | None) -> None:
    CURRENT.memory_limit, CURRENT.threads, CURRENT.temp_dir = memory_limit, threads, temp_dir
    CURRENT.wait = wait or 0.0


def memory_limit(value: str) -> str:
    """The parser of --memory-limit: a size with a unit or a share of the RAM, checked before the
    command runs (a usage error otherwise)."""
    try:
        return check_memory_limit(value)
    except StoreError as e:
        raise typer.BadParameter(str(e)) from None

"""The resource options of the command being run (--memory-limit, --threads, --temp-dir, --wait):
set when its options are parsed, read when it opens the store."""

from __future__ import annotations

from dataclasses import dataclass


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

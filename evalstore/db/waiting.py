"""A writer waiting for a store announces itself, so that a long-running reader lets it in.

DuckDB locks a store file for one writer or many readers. A reader that keeps opening the store
(``evalstore serve``: one short read-only connection per request) could keep a waiting writer
out for as long as requests overlap. So a writer that finds the store busy and retries
(``--wait``) writes a small marker file beside the store, ``<store>.writer-waiting``, and
refreshes it at every retry; a reader that yields to writers (``connect(...,
yield_to_writers=True)``) treats a fresh marker as a busy store: it does not open, the open
connections finish, and the writer gets the lock (SQLite's PENDING lock does the same).

The marker names the waiting process and is removed when the writer gets the store or gives up;
one left behind by a killed writer goes stale after :data:`FRESH` seconds and is ignored.

The server announces itself too: while it runs, ``<store>.serving`` names its process
(:func:`serving`). A writer that finds the store held by that process (DuckDB's lock error names
the holder's PID) knows the holder is a reader that lets writers in between its requests, so it
waits :data:`SERVER_WAIT` seconds by default instead of failing at once, and its message names
``evalstore serve`` if it still cannot get in (:func:`held_by_server`). A marker left by a killed
server names a process that holds no lock, so it is never taken for the holder.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: seconds after its last refresh a marker still counts (a waiting writer refreshes it at least
#: once a second: its retry delay is at most 1 s)
FRESH = 3.0
SUFFIX = ".writer-waiting"
SERVING_SUFFIX = ".serving"
#: seconds a writer waits by default for a store that `evalstore serve` holds (its requests finish
#: and it opens no new connection while the writer waits; the SQL page's queries stop at their time
#: limit, 5 s by default)
SERVER_WAIT = 30.0


def marker_path(location: str) -> str:
    return os.path.expanduser(location) + SUFFIX


def announce(location: str) -> None:
    """Write (or refresh) the marker of this process; a folder that cannot be written is no error
    (the writer then waits as it would without the marker)."""
    _write_pid(marker_path(location))


def _write_pid(path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        return
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)


def withdraw(location: str) -> None:
    """Remove the marker if this process wrote it (another waiting writer's stays)."""
    _remove_own(marker_path(location))


def _remove_own(path: str) -> None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            mine = f.read().strip() == str(os.getpid())
        if mine:
            os.unlink(path)
    except OSError:
        pass


def writer_waiting(location: str) -> bool:
    """True when a writer of another process announced itself within the last :data:`FRESH` seconds."""
    path = marker_path(location)
    try:
        st = os.lstat(path)
        with open(path, encoding="ascii", errors="replace") as f:
            pid = f.read().strip()
    except OSError:
        return False
    return pid != str(os.getpid()) and time.time() - st.st_mtime <= FRESH


def serving_path(location: str) -> str:
    return os.path.expanduser(location) + SERVING_SUFFIX


@contextmanager
def serving(location: str) -> Iterator[None]:
    """While the block runs, ``<store>.serving`` names this process as a server of the store (a
    folder that cannot be written is no error: writers then fail at once, as without it)."""
    _write_pid(serving_path(location))
    try:
        yield
    finally:
        _remove_own(serving_path(location))


def held_by_server(location: str, lock_message: str) -> bool:
    """True when the process DuckDB's ``lock_message`` names as the store's holder is the one that
    announced itself as its server (:func:`serving`)."""
    holder = re.search(r"PID (\d+)", lock_message)
    if holder is None:
        return False
    try:
        with open(serving_path(location), encoding="ascii", errors="replace") as f:
            return f.read().strip() == holder.group(1)
    except OSError:
        return False

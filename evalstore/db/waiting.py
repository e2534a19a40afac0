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
"""

from __future__ import annotations

import os
import time

#: seconds after its last refresh a marker still counts (a waiting writer refreshes it at least
#: once a second: its retry delay is at most 1 s)
FRESH = 3.0
SUFFIX = ".writer-waiting"


def marker_path(location: str) -> str:
    return os.path.expanduser(location) + SUFFIX


def announce(location: str) -> None:
    """Write (or refresh) the marker of this process; a folder that cannot be written is no error
    (the writer then waits as it would without the marker)."""
    path = marker_path(location)
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
    path = marker_path(location)
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

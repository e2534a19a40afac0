"""Every file evalstore writes for the user (``-o FILE``, ``export run``, ``export qrels``,
``--plot``, ``--plot-data``) is written by :func:`replacing`: whole or not at all.

The bytes go to a temporary file in the target's folder (so the rename cannot cross a file
system), which is flushed to disk and then renamed over the target (``os.replace``: atomic on
POSIX). A failure on the way (a full disk, an interrupt, an error of the writer) removes the
temporary file and leaves the target as it was: an existing file is never replaced by a truncated
one, and no 0-byte file is left behind. The new file gets the permissions ``open()`` would give
it (``0666`` less the umask), or those of the file it replaces. A symbolic link is followed (the
file it points to is replaced, the link stays); a target that is not a regular file (a FIFO,
``/dev/stdout``) is written directly, as nothing can be renamed over it. A folder is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import EvalstoreError

_UMASK_LOCK = threading.Lock()


class OutputPathError(EvalstoreError):
    """An output path that cannot be a file (a folder)."""


def check_output_path(path: str | os.PathLike) -> None:
    """Refuse a path that is a folder (before any work)."""
    if os.path.isdir(path):
        raise OutputPathError(f"{os.fspath(path)} is a folder; give the name of a file to write")


@contextlib.contextmanager
def replacing(path: str | os.PathLike, *, binary: bool = False, encoding: str = "utf-8") -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` when the block ends without an error (see the
    module docstring); text mode writes ``\\n`` line ends as given (``newline=''``)."""
    check_output_path(path)
    target = Path(os.path.realpath(path))
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        with open(target, "wb") if binary else open(target, "w", encoding=encoding, newline="") as fh:
            yield fh
        return
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _default_mode() -> int:
    """``0666`` less the process's umask: what ``open(path, 'w')`` gives a new file."""
    with _UMASK_LOCK:
        umask = os.umask(0)
        os.umask(umask)
    return 0o666 & ~umask

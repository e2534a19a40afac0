"""The folder a static report is written to: built aside, renamed into place, never through a link.

* The report is written into a new folder beside the target (``.<name>.report-<pid>-...``, made
  by ``mkdtemp``: private, empty, ours), each file created anew (``O_EXCL | O_NOFOLLOW``), so no
  symbolic link planted in the target folder (``index.html -> ../victim``, ``static -> ..``) is
  ever written through.
* When it is complete it takes the target's place: a rename onto the missing or empty target (one
  atomic step), or, for an earlier report, the old folder is renamed aside, the new one into place,
  and the old one removed (``shutil.rmtree``, which removes links without following them).
* A report killed half-way leaves only its folder aside, which does not block the next report; the
  next one removes such folders of processes that are no longer running.
* The target may be missing, an empty folder, or an earlier report whose every file its manifest
  names; a symbolic link as the target, a file, or a folder holding anything else (files of the
  user, links) is refused, so that nothing of the user's is replaced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from ..errors import EvalstoreError

MANIFEST = "evalstore-report.json"


class ReportError(EvalstoreError):
    """The report cannot be written as asked."""


def check_target(folder: str | os.PathLike) -> Path:
    """The report's folder, if a report may be written there (see the module docstring)."""
    path = Path(folder).expanduser()
    if path.is_symlink():
        raise ReportError(
            f"{path} is a symbolic link; give the folder itself (a report is never written through a link)"
        )
    if path.exists() and not path.is_dir():
        raise ReportError(f"{path} is a file; give a folder for the report")
    if not path.exists():
        if not path.parent.is_dir():
            raise ReportError(f"cannot create {path}: the folder {path.parent} does not exist")
        return path
    entries = list(os.scandir(path))
    if not entries:
        return path
    if not any(e.name == MANIFEST and e.is_file(follow_symlinks=False) for e in entries):
        raise ReportError(
            f"{path} is not empty and holds no earlier report ({MANIFEST}); give a new or empty folder, so that "
            f"no file of yours is overwritten"
        )
    foreign = _foreign(path)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ReportError(
            f"{path} holds an earlier report and also what that report did not write ({shown}); move those away "
            f"or give another folder (a new report replaces the whole folder)"
        )
    return path


def manifest_files(path: Path) -> list[str]:
    """The files an earlier report in ``path`` wrote, by its manifest (plain relative paths only)."""
    try:
        files = json.loads((path / MANIFEST).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [f for f in files if isinstance(f, str) and not os.path.isabs(f) and ".." not in Path(f).parts]


def _foreign(path: Path) -> list[str]:
    """The entries of an earlier report's folder that its manifest does not account for: files it
    does not name, and every symbolic link (walked without following links)."""
    ours = set(manifest_files(path)) | {MANIFEST}
    out: list[str] = []
    for top, dirs, files in os.walk(path, followlinks=False):
        rel_top = os.path.relpath(top, path)
        for name in dirs + files:
            rel = os.path.normpath(os.path.join(rel_top, name))
            st = os.lstat(os.path.join(top, name))
            if stat.S_ISLNK(st.st_mode):
                out.append(f"{rel} (a link)")
            elif not stat.S_ISDIR(st.st_mode) and rel not in ours:
                out.append(rel)
    return sorted(out)


class ReportFolder:
    """A report being written: :meth:`write` files into the private folder aside, :meth:`commit`
    moves it into place; leaving the ``with`` block without committing removes it."""

    def __init__(self, target: Path) -> None:
        self.target = target
        _remove_stale(target)
        self.root = Path(tempfile.mkdtemp(prefix=f".{target.name}.report-{os.getpid()}-", dir=target.parent))
        self.committed = False

    def __enter__(self) -> ReportFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.committed:
            shutil.rmtree(self.root, ignore_errors=True)

    def write(self, rel: str, data: bytes) -> None:
        """Create the file ``rel`` (a plain relative path) in the folder, never through a link."""
        parts = Path(rel).parts
        if not parts or os.path.isabs(rel) or ".." in parts:
            raise ReportError(f"not a path inside the report: {rel!r}")
        path = self.root.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags, 0o666)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def commit(self) -> None:
        """Put the complete report in the target's place (see the module docstring)."""
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.root, 0o777 & ~umask)  # mkdtemp made it private
        target = self.target
        if not os.path.lexists(target):
            self._rename_into(target)
            return
        check_target(target)  # again: it may have changed while the report was written
        if not any(target.iterdir()):
            self._rename_into(target)  # onto an empty folder: one atomic step
            return
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.report-{os.getpid()}-old-", dir=target.parent))
        os.rmdir(old)
        os.rename(target, old)
        try:
            self._rename_into(target)
        except BaseException:
            os.rename(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)

    def _rename_into(self, target: Path) -> None:
        try:
            os.rename(self.root, target)
        except OSError as e:
            raise ReportError(f"cannot put the report in place at {target}: {e.strerror or e}") from None
        self.committed = True


_STALE = re.compile(r"^\.(?P<name>.*)\.report-(?P<pid>\d+)-")


def _remove_stale(target: Path) -> None:
    """Remove the folders aside of earlier reports into ``target`` whose process is gone."""
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for e in entries:
        m = _STALE.match(e.name)
        if not m or m.group("name") != target.name or not e.is_dir(follow_symlinks=False):
            continue
        if not _alive(int(m.group("pid"))):
            shutil.rmtree(e.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # an earlier, finished report of this process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True

"""A file's content in bounded blocks of whole lines, hashed as it is read.

The fast run reader (:mod:`evalstore.ingest.fast`) parses a run file block by block, so that its
memory is a few blocks whatever the file's size. :class:`LineBlocks` reads the file once (a gzip
file decompressed as a stream, every member), hands out blocks of about :data:`BLOCK_BYTES` that
end at a line feed (the last one may end without), and takes the two hashes ingest records on the
way: the sha256 of the content (the decompressed bytes) and of the file as given.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

#: Bytes of content per block: about 60,000 lines of a typical run (35 bytes a line). Smaller blocks
#: keep less in memory at once (each block is parsed, checked and ranked into a few copies) and cost
#: no more CPU: measured on a 10 M-line file, 16 MB blocks peaked at 680 MB, 2 MB blocks at 440 MB.
BLOCK_BYTES = 2 << 20
_READ = 1 << 20


class Unreadable(Exception):
    """The file cannot be read as blocks of lines (damaged gzip data, a line longer than allowed):
    the general reader reads it and gives the exact message."""


class _Hashing:
    """A binary file that hashes what is read from it (the file as given, under gzip)."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self.sha = hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self.sha.update(data)
        return data

    def readinto(self, b) -> int:  # what GzipFile's buffered reader calls
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return self._f.closed


class LineBlocks:
    """The content of ``path`` as blocks of whole lines (see the module docstring). After a complete
    iteration, ``sha`` is the content's sha256 and ``file_sha`` the file's (the same for an
    uncompressed file); with ``want_sha=False`` neither is taken. A line longer than ``max_line``
    bytes, or damaged gzip data, raises :class:`Unreadable`."""

    def __init__(
        self,
        path: Path,
        compression: str,
        *,
        block_bytes: int = BLOCK_BYTES,
        want_sha: bool = True,
        max_line: int = 1 << 20,
    ) -> None:
        self.path, self.compression, self.block_bytes = path, compression, block_bytes
        self.want_sha, self.max_line = want_sha, max_line
        self.sha: str | None = None
        self.file_sha: str | None = None
        self.n_bytes = 0

    def __iter__(self) -> Iterator[bytes]:
        content = hashlib.sha256() if self.want_sha else None
        with open(self.path, "rb") as raw:
            hashing = _Hashing(raw) if self.want_sha and self.compression == "gzip" else None
            source: Any = gzip.GzipFile(fileobj=hashing or raw, mode="rb") if self.compression == "gzip" else raw  # type: ignore[arg-type]
            rest = b""
            try:
                while True:
                    data = source.read(self.block_bytes)
                    if content is not None:
                        content.update(data)
                    self.n_bytes += len(data)
                    if not data:
                        break
                    data = rest + data if rest else data
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:  # no line end yet: a long line, read on
                        if len(data) > self.max_line:
                            raise Unreadable(f"a line longer than {self.max_line} bytes")
                        rest = data
                        continue
                    rest = data[cut:]
                    if len(rest) > self.max_line:
                        raise Unreadable(f"a line longer than {self.max_line} bytes")
                    yield data[:cut] if rest else data
            except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
                raise Unreadable(str(e)) from None
            if rest:
                yield rest
        if content is not None:
            self.sha = content.hexdigest()
            self.file_sha = hashing.sha.hexdigest() if hashing is not None else self.sha


def content_hashes(path: Path, compression: str) -> tuple[str, str]:
    """``(sha of the content, sha of the file)`` in one streaming pass (bounded memory), or
    :class:`Unreadable`."""
    blocks = LineBlocks(path, compression, block_bytes=1 << 22, max_line=1 << 62)
    for _ in blocks:
        pass
    assert blocks.sha is not None and blocks.file_sha is not None
    return blocks.sha, blocks.file_sha

"""A file's content in bounded blocks of whole lines, hashed as it is read.

The fast run reader (:mod:`evalstore.ingest.fast`) parses a run file block by block, so that its
memory is a few blocks whatever the file's size. :class:`LineBlocks` reads the file once (a gzip
file decompressed as a stream, every member), hands out blocks of about :data:`BLOCK_BYTES` that
end at a line feed (the last one may end without), and takes the two hashes ingest records on the
way: the sha256 of the content (the decompressed bytes) and of the file as given.
"""

from __future__ import annotations

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
#: zlib's window bits of a gzip member (header and trailer checked)
_GZIP = 16 + zlib.MAX_WBITS


class Unreadable(Exception):
    """The file cannot be read as blocks of lines (damaged gzip data, a line longer than allowed):
    the general reader reads it and gives the exact message."""


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
        #: the content's last byte (``b""`` when empty), after a complete iteration
        self.last_byte = b""

    def __iter__(self) -> Iterator[bytes]:
        content = hashlib.sha256() if self.want_sha else None
        with open(self.path, "rb") as raw:
            file_sha = hashlib.sha256() if self.want_sha and self.compression == "gzip" else None
            pieces = (
                _gunzipped(raw, file_sha, self.block_bytes)
                if self.compression == "gzip"
                else _read(raw, self.block_bytes)
            )
            rest = b""
            try:
                for data in _joined(pieces, self.block_bytes, self._took(content)):
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
            except (OSError, EOFError, zlib.error) as e:
                raise Unreadable(str(e)) from None
            if rest:
                yield rest
        if content is not None:
            self.sha = content.hexdigest()
            self.file_sha = file_sha.hexdigest() if file_sha is not None else self.sha

    def _took(self, content: Any):
        """What counts and hashes each piece of the content as it is read."""

        def took(piece: bytes) -> None:
            if content is not None:
                content.update(piece)
            self.n_bytes += len(piece)
            self.last_byte = piece[-1:]

        return took


def _read(raw: BinaryIO, size: int) -> Iterator[bytes]:
    """The bytes of a plain file, ``size`` at a time."""
    while data := raw.read(size):
        yield data


def _gunzipped(raw: BinaryIO, file_sha: Any, size: int) -> Iterator[bytes]:
    """The decompressed bytes of a gzip file (every member, as ``gzip`` reads them; at most ``size``
    bytes at a time, whatever the compression ratio), its bytes hashed into ``file_sha`` as read.
    Damaged data raises ``zlib.error``; a member cut short, ``EOFError``. (zlib itself, not
    ``gzip.GzipFile``: half the CPU besides the decompression, 0.2 CPU-s on TREC DL 2020's runs.)"""
    member, fed, ended = zlib.decompressobj(_GZIP), False, False
    while data := raw.read(_READ):
        if file_sha is not None:
            file_sha.update(data)
        while data:
            if ended and not fed:  # zero bytes after a member pad the file (gzip steps over them)
                data = data.lstrip(b"\0")
                if not data:
                    break
            fed = True
            out = member.decompress(data, size)
            if out:
                yield out
            if member.eof:  # the next member starts in what is left (a file of `cat a.gz b.gz`)
                data, member, fed, ended = member.unused_data, zlib.decompressobj(_GZIP), False, True
            else:
                data = member.unconsumed_tail
    while fed and not member.eof:  # what zlib holds back of the last member's output
        out = member.decompress(b"", size)
        if not out:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        yield out


def _joined(pieces: Iterator[bytes], size: int, took: Any) -> Iterator[bytes]:
    """The pieces (each handed to ``took`` first) joined into blocks of at least ``size`` bytes (the
    last one may be shorter)."""
    held: list[bytes] = []
    n = 0
    for piece in pieces:
        took(piece)
        held.append(piece)
        n += len(piece)
        if n >= size:
            yield held[0] if len(held) == 1 else b"".join(held)
            held, n = [], 0
    if held:
        yield b"".join(held)


def content_hashes(path: Path, compression: str) -> tuple[str, str]:
    """``(sha of the content, sha of the file)`` in one streaming pass (bounded memory), or
    :class:`Unreadable`."""
    blocks = LineBlocks(path, compression, block_bytes=1 << 22, max_line=1 << 62)
    for _ in blocks:
        pass
    assert blocks.sha is not None and blocks.file_sha is not None
    return blocks.sha, blocks.file_sha

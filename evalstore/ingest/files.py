"""Input files: paths and globs, compression, hashing, and reading lines back for error messages.

Everything here works on one file at a time in Python; the bulk reading is done by DuckDB
(:mod:`evalstore.ingest.readers`). Lines end at LF, CRLF or a lone CR and a UTF-8 BOM is dropped,
as in DuckDB's reader, so a "content line index" from SQL maps back to a physical line here.
"""

from __future__ import annotations

import glob as _glob
import gzip
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import IngestError

WS = " \t\r"
_SPLIT_RE = re.compile(r"[ \t\r]+")
_BOM = b"\xef\xbb\xbf"
_OTHER_COMPRESSION = {
    b"BZh": ("bzip2", "bunzip2"),
    b"\xfd7zXZ": ("xz", "unxz"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
    b"PK\x03\x04": ("zip", "unzip"),
}


def expand_paths(paths: str | os.PathLike | Iterable) -> list[Path]:
    """Expand globs; keep the order given; error for a missing file or a folder."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        s = os.fspath(p)
        if s == STDIN or os.path.exists(s):
            out.append(Path(s))
            continue
        if any(ch in s for ch in "*?["):
            matches = sorted(_glob.glob(s))
            if not matches:
                raise IngestError("no file matches this pattern", file=s)
            out.extend(Path(m) for m in matches)
            continue
        raise IngestError("file not found; check the path", file=s)
    if not out:
        raise IngestError("no input files given")
    for p in out:
        if str(p) != STDIN and p.is_dir():
            raise IngestError("is a folder, not a file (give the files, or a glob such as 'runs/*.gz')", file=str(p))
    seen: set[str] = set()
    for p in out:
        key = STDIN if str(p) == STDIN else os.path.realpath(p)
        if key in seen:
            raise IngestError("the same file is given twice in this call", file=str(p))
        seen.add(key)
    return out


def content_sha256(path: Path) -> str:
    """sha256 of the file's content: the decompressed bytes of a gzip file, else its bytes (so a
    run read from ``run.gz``, from ``run`` or from ``zcat run.gz |`` has one identity)."""
    if compression(path) != "gzip":
        return file_sha256(path)
    h = hashlib.sha256()
    lines = 0
    try:
        with gzip.open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
                lines += chunk.count(b"\n")
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, lines, e) from None
    return h.hexdigest()


#: What reading a damaged or truncated gzip file raises.
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def damaged_gzip(path: Path, lines: int, error: Exception) -> IngestError:
    """The error of a gzip file whose data ends or breaks after ``lines`` lines."""
    return IngestError(
        f"the gzip data is damaged or truncated after line {lines} ({error})",
        file=display_name(path),
        expected="a complete gzip file (check it with gzip -t FILE)",
    )


def file_sha256(path: Path) -> str:
    """sha256 of the file's bytes as stored (what ``sha256sum`` prints)."""
    if path in _SPOOLED_SHA:
        return _SPOOLED_SHA[path]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


STDIN = "-"
#: sha256 of spooled copies, computed while copying (the copy is not read twice for it)
_SPOOLED_SHA: dict[Path, str] = {}
#: what a spooled copy was: '-' for standard input, or the pipe's path (for messages and sources)
_SPOOLED_NAME: dict[Path, str] = {}
#: a pipe is spooled up to this size; beyond it the input is refused (a stream that never ends)
MAX_SPOOL_BYTES = 64 << 30


@contextmanager
def materialized(paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Regular files as they are; ``-`` (standard input), pipes and process substitutions
    (``<(zcat run.gz)``) copied once to a temporary file, hashed while copying; devices such as
    ``/dev/zero`` refused (they never end). The copies are removed afterwards."""
    tmp: str | None = None
    out: list[Path] = []
    try:
        for p in paths:
            if str(p) == STDIN:
                source, label = sys.stdin.buffer, "stdin"
                if sys.stdin.isatty():
                    raise IngestError("- reads standard input, but nothing is piped in", file=STDIN)
            else:
                mode = os.stat(p).st_mode
                if stat.S_ISREG(mode):
                    out.append(p)
                    continue
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                    raise IngestError(
                        "is a device, not a file (a device such as /dev/zero never ends)",
                        file=str(p),
                        expected="a run or qrels file, a pipe, or - for standard input",
                    )
                source, label = open(p, "rb"), p.name  # noqa: SIM115  (closed below)
            tmp = tmp or tempfile.mkdtemp(prefix="evalstore-spool-")
            target = Path(tmp) / f"{len(out)}-{label}"
            _SPOOLED_SHA[target] = _spool(source, target, str(p))
            _SPOOLED_NAME[target] = "<stdin>" if str(p) == STDIN else str(p)
            if source is not sys.stdin.buffer:
                source.close()
            out.append(target)
        yield out
    finally:
        for q in out:
            _SPOOLED_SHA.pop(q, None)
            _SPOOLED_NAME.pop(q, None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def display_name(path: Path) -> str:
    """The name of an input as the user gave it (``<stdin>`` for a spooled standard input)."""
    return _SPOOLED_NAME.get(path, str(path))


def _spool(source, target: Path, name: str) -> str:
    h = hashlib.sha256()
    n = 0
    with open(target, "wb") as f:
        for chunk in iter(lambda: source.read(1 << 20), b""):
            n += len(chunk)
            if n > MAX_SPOOL_BYTES:
                raise IngestError(
                    f"more than {MAX_SPOOL_BYTES >> 30} GB came through this pipe; a stream that may never end is "
                    f"refused",
                    file=name,
                    expected="a run or qrels file (or a pipe that ends)",
                )
            h.update(chunk)
            f.write(chunk)
    return h.hexdigest()


def combined_sha(paths: Sequence[Path], shas: dict[Path, str]) -> str:
    if len(paths) == 1:
        return shas[paths[0]]
    return hashlib.sha256("".join(shas[p] for p in paths).encode()).hexdigest()


def hashes(paths: Sequence[Path]) -> tuple[dict[Path, str], dict[Path, str]]:
    """``(content hashes, file hashes)`` of ``paths`` (they differ for gzip files only)."""
    files = {p: file_sha256(p) for p in paths}
    content = {p: content_sha256(p) if compression(p) == "gzip" else files[p] for p in paths}
    return content, files


def compression(path: Path) -> str:
    """'gzip' or 'none', from the magic bytes; other compressions are refused with advice."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except OSError as e:
        raise IngestError(f"cannot read the file: {e.strerror}", file=str(path)) from None
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    for m, (kind, tool) in _OTHER_COMPRESSION.items():
        if magic.startswith(m):
            raise IngestError(
                f"the file is {kind}-compressed; evalstore reads plain text and gzip (.gz) files",
                file=str(path),
                expected=f"decompress it first (e.g. {tool} FILE) or recompress it with gzip",
            )
    return "none"


def open_bytes(path: Path):
    return gzip.open(path, "rb") if compression(path) == "gzip" else open(path, "rb")


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(physical line number, bytes without line end). Lines end at LF, CRLF or a lone CR, as in
    DuckDB's reader; a UTF-8 BOM at the start is dropped."""
    n = 0
    try:
        with open_bytes(path) as f:
            for raw in f:
                if n == 0 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                for part in raw.split(b"\r") if b"\r" in raw else (raw,):
                    n += 1
                    yield n, part
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, n, e) from None
    except OSError as e:
        raise IngestError(f"cannot read the file: {e.strerror or e}", file=str(path)) from None


def is_content(text: str) -> bool:
    stripped = text.strip(WS)
    return bool(stripped) and not stripped.startswith("#")


def content_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(physical line number, text) of the lines that carry data: not blank, not a '#' comment.

    The same definition as the SQL filter of :func:`evalstore.ingest.readers.branch_sql`; used to sniff the first line
    and, on error paths, to turn the position of a bad row into a line number."""
    for n, raw in raw_lines(path):
        text = raw.decode("utf-8", errors="replace")
        if is_content(text):
            yield n, text


def first_content_line(path: Path, max_bytes: int = 1 << 20) -> str | None:
    """The first data line of the file, or None if none in its first ``max_bytes``."""
    seen = 0
    for _, raw in raw_lines(path):
        text = raw.decode("utf-8", errors="replace")
        if is_content(text):
            return text
        seen += len(raw) + 1
        if seen > max_bytes:
            return None
    return None


def physical_line(path: Path, content_index: int) -> tuple[int, str]:
    """Physical line number and text of the content_index-th (1-based) data line."""
    for k, (ln, text) in enumerate(content_lines(path), 1):
        if k == content_index:
            return ln, text
    return content_index, ""


def duckdb_path(path: Path) -> str:
    """The path as a DuckDB file pattern that matches only this file: DuckDB treats * ? [ in
    read_csv paths as glob characters (a file 'run[1].txt' would read 'run1.txt')."""
    return str(path).replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")


def same_file(name: str, path: Path) -> bool:
    return name.strip() in (str(path), duckdb_path(path))


def fields(text: str) -> list[str]:
    s = text.strip(WS)
    return _SPLIT_RE.split(s) if s else []


def check_decodable(path: Path) -> None:
    """Raise a clear error at the first bytes that are not UTF-8 (error path of the reader)."""
    for n, raw in raw_lines(path):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise IngestError(
                f"undecodable bytes: byte {raw[e.start : e.start + 1]!r} at column {e.start + 1} is not UTF-8",
                file=str(path),
                line=n,
                text=raw.decode("utf-8", errors="replace"),
                expected="a UTF-8 (or ASCII) text file; convert it, e.g. with iconv -f latin1 -t utf-8",
            ) from None


INTENT_PROBS_EXPECTED = "3 whitespace-separated fields: topic intent probability (a number between 0 and 1)"


def read_intent_probs(path: str | os.PathLike) -> list[tuple[str, str, float]]:
    """The lines ``topic intent prob`` of an intent probability file (NTCIR's Iprob files), checked:
    three fields, a probability in [0, 1], each (topic, intent) once."""
    p = Path(path)
    if not p.is_file():
        raise IngestError("intent probability file not found", file=str(p))
    out: list[tuple[str, str, float]] = []
    seen: set[tuple[str, str]] = set()
    for ln, text in content_lines(p):
        f = fields(text)
        err = None
        if len(f) != 3:
            err = f"wrong number of columns ({len(f)} instead of 3)"
        else:
            try:
                prob = float(f[2])
            except ValueError:
                prob = float("nan")
            if not 0.0 <= prob <= 1.0:
                err = f"probability {f[2]!r} (column 3) is not a number between 0 and 1"
            elif (f[0], f[1]) in seen:
                err = f"intent {f[1]!r} of topic {f[0]!r} is given twice"
        if err:
            raise IngestError(err, file=display_name(p), line=ln, text=text, expected=INTENT_PROBS_EXPECTED)
        seen.add((f[0], f[1]))
        out.append((f[0], f[1], prob))
    if not out:
        raise IngestError("empty intent probability file", file=display_name(p), expected=INTENT_PROBS_EXPECTED)
    return out

"""ir_metadata run headers (Breuer et al., "ir_metadata: An Extensible Metadata Schema for IR
Experiments", SIGIR 2022; https://www.ir-metadata.org): PRIMAD metadata as YAML in the comment
lines at the top of a run file, between ``# ir_metadata.start`` and ``# ir_metadata.end``::

    # ir_metadata.start
    # tag: bm25
    # method:
    #   retrieval:
    #   - name: bm25
    #     k1: 0.9
    # ir_metadata.end
    q1 Q0 d1 1 12.3 bm25

Both readers skip comment lines; this module finds the block before a file is read
(:func:`read_header`), checks it and parses it with PyYAML's ``safe_load`` (no object
construction). The run keeps the block twice: as JSON (``runs.metadata``, queryable with
``metadata->>'$.method.name'``) and as the exact text of its lines (``run_meta.metadata_header``),
which ``evalstore export run`` writes back byte for byte above the rows. :func:`render` writes the
block of a fused run's recipe.

Rules: the block is among the comment lines before the first run line (repro_eval writes it on
the first line); each of its lines is a comment (``#``, then the YAML line after one optional
space) or blank; it ends with ``# ir_metadata.end``; its YAML is a mapping. A block that is not
closed before the first run line, a line in it that is not a comment, YAML that does not parse or
is not a mapping, and text that is not UTF-8 are errors naming the file and line.
:func:`leading_comment_bytes` tells the fast reader how many bytes of leading comment lines to
step over (:mod:`evalstore.ingest.fast`).
"""

from __future__ import annotations

import base64
import datetime
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IngestError
from .files import GZIP_ERRORS, damaged_gzip, display_name, open_bytes

if TYPE_CHECKING:
    from ..db.handle import StoreHandle
    from .write import IngestResult

START = "# ir_metadata.start"
END = "# ir_metadata.end"
_MARK = re.compile(r"#\s*ir_metadata\.(start|end)\s*")
_BOM = b"\xef\xbb\xbf"
EXPECTED = (
    "an ir_metadata block: '# ir_metadata.start', YAML lines each behind '# ', then '# ir_metadata.end', "
    "before the first run line"
)


@dataclass(frozen=True)
class Header:
    """A run file's ir_metadata block: ``text`` (its lines exactly as in the file, line ends
    included), ``data`` (the parsed YAML, made JSON-safe), the 1-based lines it spans."""

    text: str
    data: dict[str, Any]
    first_line: int
    last_line: int

    def json(self) -> str:
        return json.dumps(self.data, ensure_ascii=False)


def read_header(path: Path, name: str | None = None) -> Header | None:
    """The ir_metadata block of a run file (None when it has none), reading only the comment
    lines before its first run line. ``name``: the file as messages call it."""
    where = name or display_name(path)
    try:
        with open_bytes(path) as f:
            return scan(_lines(f), where)
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, 0, e) from None
    except OSError as e:
        raise IngestError(f"cannot read the file: {e.strerror or e}", file=where) from None


def _lines(f) -> Iterator[bytes]:
    first = True
    for raw in f:
        if first and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        first = False
        yield raw


def scan(lines: Iterable[bytes], where: str) -> Header | None:
    """The ir_metadata block among the leading comment lines of ``lines`` (each with its line end),
    or None; raises :class:`IngestError` for a malformed block (see the module docstring)."""
    block: list[str] = []
    start = 0
    for n, raw in enumerate(lines, 1):
        text = _decode(raw, where, n, inside=bool(start))
        bare = text.rstrip("\r\n")
        if not start:
            if _is_mark(bare, "start"):
                start, block = n, [text]
            elif _is_mark(bare, "end"):
                raise IngestError(
                    "'# ir_metadata.end' without a '# ir_metadata.start' line before it",
                    file=where,
                    line=n,
                    text=bare,
                    expected=EXPECTED,
                )
            elif bare.strip() and not bare.lstrip().startswith("#"):
                return None  # the first run line: the file has no block
            continue
        block.append(text)
        if _is_mark(bare, "end"):
            return Header("".join(block), parse(block, where, start), start, n)
        if bare.strip() and not bare.lstrip().startswith("#"):
            raise IngestError(
                f"the ir_metadata block opened on line {start} is not closed before this line, which is not a "
                f"comment (every line of the block starts with '#'; the block ends with '# ir_metadata.end')",
                file=where,
                line=n,
                text=bare,
                expected=EXPECTED,
            )
    if start:
        raise IngestError(
            f"the ir_metadata block opened on line {start} has no '# ir_metadata.end' line",
            file=where,
            line=start,
            text=START,
            expected=EXPECTED,
        )
    return None


def _is_mark(line: str, which: str) -> bool:
    m = _MARK.fullmatch(line)
    return m is not None and m.group(1) == which


def _decode(raw: bytes, where: str, n: int, inside: bool) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if not inside and not raw.lstrip().startswith(b"#"):
            return raw.decode("utf-8", errors="replace")  # a run line: the readers give the exact error
        raise IngestError(
            "a comment line at the top of the run file is not UTF-8 text",
            file=where,
            line=n,
            text=raw.decode("utf-8", errors="replace").rstrip("\r\n"),
            expected="UTF-8 text",
        ) from None


def yaml_text(block: list[str]) -> str:
    """The YAML of a block's lines (markers excluded): each line without its ``#`` and one space."""
    out = []
    for line in block[1:-1]:
        bare = line.rstrip("\r\n").lstrip()
        body = bare[1:] if bare.startswith("#") else bare
        out.append(body[1:] if body.startswith(" ") else body)
    return "\n".join(out) + "\n"


def parse(block: list[str], where: str, start: int) -> dict[str, Any]:
    """The block's YAML as a JSON-safe mapping (``yaml.safe_load``)."""
    import yaml  # PyYAML, only when a file has a block

    try:
        data = yaml.safe_load(yaml_text(block))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = start + 1 + mark.line if mark is not None else start
        line = min(line, start + len(block) - 2) if len(block) > 2 else start
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise IngestError(
            f"the ir_metadata block opened on line {start} is not valid YAML: {problem}",
            file=where,
            line=line,
            text=block[line - start].rstrip("\r\n"),
            expected=EXPECTED,
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise IngestError(
            f"the ir_metadata block opened on line {start} holds a YAML {type(data).__name__}, not a mapping",
            file=where,
            line=start + 1,
            text=block[1].rstrip("\r\n"),
            expected="keys and values (tag: ..., method: ...)",
        )
    return json_safe(data)


def json_safe(value: Any) -> Any:
    """YAML's values as JSON's: dates and times as ISO text, binary as base64, sets as sorted lists,
    non-finite numbers as text, keys as text."""
    if isinstance(value, dict):
        return {_key(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [json_safe(v) for v in sorted(value, key=repr)]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool) or k is None:
        return json.dumps(k)
    return str(json_safe(k))


def render(data: dict[str, Any]) -> str:
    """The block of ``data`` as a run file's header (``# `` before each YAML line, LF line ends)."""
    import yaml

    body = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
    return "".join([START + "\n", *(f"# {line}\n" if line else "#\n" for line in body.splitlines()), END + "\n"])


def leading_comment_bytes(data: bytes) -> int:
    """How many bytes of ``data`` the leading comment lines take (lines starting with ``#``, UTF-8,
    without a CR, which the general reader would read as a line break): the fast reader steps over
    them, so a run file with an ir_metadata header is read as fast as one without."""
    pos = 0
    while data.startswith(b"#", pos):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end + 1
        line = data[pos:end]
        if b"\r" in line:
            break
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            break
        pos = end
    return pos


def save_headers(store: StoreHandle, results: dict[int, IngestResult], headers: dict[int, Header]) -> None:
    """Keep the headers of the runs an ingest call stored (``results``, by group; an unchanged run
    keeps its own, the same content)."""
    for idx, header in headers.items():
        res = results.get(idx)
        if res is not None and res.status != "unchanged":
            store.con.execute(
                "UPDATE run_meta SET metadata = ?::JSON, metadata_header = ? WHERE name = ?",
                [header.json(), header.text, res.name],
            )

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

Bounds (a header is a few kilobytes of metadata; YAML's aliases can make a few hundred bytes
stand for gigabytes): a block of at most :data:`MAX_BYTES` bytes, nested at most
:data:`MAX_DEPTH` levels, whose value expanded (every alias counted as what it stands for) holds
at most :data:`MAX_EXPANDED` characters; no alias inside the collection it names (a cycle); no
integer longer than :data:`MAX_DIGITS` digits. Each is refused with the file and line, before
anything is built from the YAML.
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
#: the largest ir_metadata block, in bytes
MAX_BYTES = 1 << 20
#: the deepest nesting of collections in a block
MAX_DEPTH = 64
#: the most characters a block's value may hold with every alias expanded (about its stored JSON)
MAX_EXPANDED = 1 << 20
#: the longest integer (Python refuses to convert one of more than 4,300 digits)
MAX_DIGITS = 100
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
    size = 0
    for n, raw in enumerate(lines, 1):
        text = _decode(raw, where, n, inside=bool(start))
        if start:
            size += len(raw)
            if size > MAX_BYTES:
                raise IngestError(
                    f"the ir_metadata block opened on line {start} is larger than {MAX_BYTES:,} bytes "
                    f"(a run header is metadata of a few kilobytes)",
                    file=where, line=n, text=text.rstrip("\r\n")[:200], expected=EXPECTED,
                )  # fmt: skip
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
    """The block's YAML as a JSON-safe mapping (PyYAML's safe loader, bounded: see the module
    docstring)."""
    import yaml  # PyYAML, only when a file has a block

    def line_of(mark: Any) -> int:
        line = start + 1 + mark.line if mark is not None else start
        return min(line, start + len(block) - 2) if len(block) > 2 else start

    try:
        data = _load(yaml_text(block))
    except _Bound as e:
        line = line_of(e.mark)
        raise IngestError(
            f"the ir_metadata block opened on line {start} is refused: {e.problem}",
            file=where, line=line, text=block[line - start].rstrip("\r\n")[:200], expected=EXPECTED,
        ) from None  # fmt: skip
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = line_of(mark)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise IngestError(
            f"the ir_metadata block opened on line {start} is not valid YAML: {problem}",
            file=where,
            line=line,
            text=block[line - start].rstrip("\r\n")[:200],
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


class _Bound(Exception):
    """A bound of the block met (``problem``) at a YAML position (``mark``)."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem, self.mark = problem, mark


def _load(text: str) -> Any:
    """``yaml.safe_load`` of ``text`` within the bounds: the depth and alias cycles are checked
    while the YAML is composed into nodes, the expanded size on the nodes, long integers when they
    are built; nothing is constructed from a document that breaks a bound."""
    loader = _bounded_loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded(node, {})
        if size > MAX_EXPANDED:
            mark = loader.alias_marks[0] if loader.alias_marks else node.start_mark
            raise _Bound(
                f"its value expanded holds more than {MAX_EXPANDED:,} characters"
                + (" (through YAML aliases, the first on this line)" if loader.alias_marks else ""),
                mark,
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded(node: Any, memo: dict[int, int]) -> int:
    """The characters a node stands for with every alias expanded (memoised per node: a shared node
    is counted each time it is used, in time linear in the nodes)."""
    key = id(node)
    if key not in memo:
        if isinstance(node.value, str):
            memo[key] = len(node.value) + 1
        elif node.id == "mapping":
            memo[key] = 1 + sum(_expanded(k, memo) + _expanded(v, memo) for k, v in node.value)
        else:
            memo[key] = 1 + sum(_expanded(v, memo) for v in node.value)
    return memo[key]


_LOADER: Any = None


def _bounded_loader() -> Any:
    """PyYAML's SafeLoader with the block's bounds (made once, on first use: PyYAML is imported
    only when a file has a block)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0
            self.open_anchors: set[str] = set()
            self.alias_marks: list[Any] = []

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in self.open_anchors:
                    cycle = f"the alias *{event.anchor} is inside the collection it names (a cycle)"
                    raise _Bound(cycle, event.start_mark)
                self.alias_marks.append(event.start_mark)
                return super().compose_node(parent, index)
            if self.depth >= MAX_DEPTH:
                raise _Bound(f"it nests collections more than {MAX_DEPTH} levels deep", event.start_mark)
            anchor = getattr(event, "anchor", None)
            self.depth += 1
            if anchor is not None:
                self.open_anchors.add(anchor)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1
                self.open_anchors.discard(anchor)

        def construct_yaml_int(self, node: Any) -> Any:
            if len(node.value) > MAX_DIGITS:
                raise _Bound(f"a number has more than {MAX_DIGITS} digits", node.start_mark)
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    _LOADER = BoundedLoader
    return _LOADER


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

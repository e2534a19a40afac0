"""What `export run` needs to give an ingested TREC run file back byte for byte.

A run's rows (``run_row_data``: topic, doc, the rank as written, the score as a double, the line
number) do not hold the text of its lines: the separators (tabs or spaces), the second field
(``Q0``), the tag, anything after it, the line ends and how the score was spelt (``10.606700``
is the double 10.6067). Most run files write every line alike, so at ingest the first lines of a
one-file run are read again and their shape learnt as a :class:`LineFormat`: the separators, the
constant fields and line end, and the score's spelling (the shortest text of the double; a fixed
number of decimals, ``%.6f``; or of significant digits, ``%.6g``, as Indri writes them). The
run's lines are then made from its rows in that format (:func:`part_lines`, in Arrow, the scores
spelt by :func:`shortest_fields` or :func:`fixed_fields`; formats kept before ``spelt_by`` and other
spellings: :func:`lines_sql`, in DuckDB) and their sha256 compared with the run's content hash
(``runs.sha256``, of the file's decompressed bytes; for a file the fast reader reads, on its rows
as they are read, :class:`ReadCheck`, which for a file of single separators compares each row's
fields as written with their text in the format and counts the bytes instead, no line made or
hashed; else on the stored rows): equal, the format is kept
(``run_meta.line_format``, a few bytes); different (lines of several shapes, comments or blank lines
between them, duplicates dropped by ``--dedupe``), the file's text itself is kept, zstd-compressed
in parts (``run_text_data``). Either way ``export run`` writes the
ingested text, and its sha256 is ``runs.sha256``.

On TREC DL 2019 (37 runs) and 2020 (59 runs) every file has one shape: only the formats are kept
(the store's size is unchanged), for about 0.1-0.2 CPU-s per million lines at ingest, most of it
spelling the scores (0.5 when the stored rows are read again). Runs made otherwise (a fused run, a
DataFrame or dict, NTCIR res files, a run ingested before schema 17) keep no text: export writes
evalstore's own lines (``topic Q0 doc rank score tag``, single spaces), which is the content a
fused run's hash is taken of.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .files import is_content, open_bytes

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: the lines whose shape is learnt before the format is checked on every line
SAMPLE_LINES = 200
#: bytes of the file's text compressed as one part when the text itself is kept
PART_BYTES = 8 << 20
CODEC = "zstd"
#: the formats tried on every line before the text itself is kept
MAX_TRIES = 2
#: the six fields of a TREC run line with the blanks between them, and what follows the tag
_LINE = re.compile(rb"(\S+)([ \t]+)(\S+)([ \t]+)(\S+)([ \t]+)(\S+)([ \t]+)(\S+)([ \t]+)(\S+)(.*)")


@dataclass(frozen=True)
class LineFormat:
    """How every line of a run file is written: ``topic seps[0] q0 seps[1] doc seps[2] rank
    seps[3] score seps[4] tag rest eol``; ``score``: the printf format of the score (``%.6f``,
    ``%.6g``; None: the shortest text that reads back as the same double); ``tag``: None takes the
    tag given at export; ``final_eol``: the last line ends with ``eol``. The default is evalstore's
    own line."""

    seps: tuple[str, ...] = (" ", " ", " ", " ", " ")
    q0: str = "Q0"
    tag: str | None = None
    rest: str = ""
    eol: str = "\n"
    score: str | None = None
    final_eol: bool = True
    #: what spells the shortest text of a score (``score`` None) at export and in the check at
    #: ingest: ``"duckdb"`` (``CAST(score AS VARCHAR)``; the formats kept before this field) or
    #: ``"arrow"`` (:func:`shortest_fields`: the same text, a third of the CPU; the formats learnt now)
    spelt_by: str = "duckdb"

    @property
    def arrow_made(self) -> bool:
        """Export makes these lines with Arrow (:func:`part_lines`), not with DuckDB (:func:`lines_sql`)."""
        return self.spelt_by == "arrow" and (self.score is None or fixed_decimals(self.score) is not None)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> LineFormat:
        d = json.loads(text)
        return cls(**{**d, "seps": tuple(d["seps"])})


def lines_sql(rows: str, fmt: LineFormat) -> str:
    """The lines of a run (one VARCHAR column ``line``, each with its line end, in file order) from
    ``rows``, a relation with the columns of ``run_row_data``; bound parameters ``$tag`` (when the
    format has none) and those of :func:`params`."""
    return f"""SELECT topic || $s1 || $q0 || $s2 || doc || $s3 || coalesce(submitted_rank, rank) || $s4 ||
                      {score_sql(fmt, "$score")} || $s5 || $tag || $rest || $eol AS line
               FROM {rows} ORDER BY line_no, topic"""


def score_sql(fmt: LineFormat, spelling: str) -> str:
    """The SQL of a line's score text in the format ``fmt`` (``spelling``: the SQL of its printf
    format, a parameter or a literal); the one expression of export and of the check at ingest."""
    if fmt.score is not None:
        return f"printf({spelling}, score)"
    if fmt != LineFormat():
        return "CAST(score AS VARCHAR)"
    # evalstore's own lines give a run without scores (NTCIR res files) n - rank + 1; a learnt
    # format is a TREC file's, whose every line has a score (no window to compute)
    return "CAST(coalesce(score, count(*) OVER (PARTITION BY topic) - rank + 1) AS VARCHAR)"


def params(fmt: LineFormat, tag: str | None) -> dict[str, Any]:
    """The values :func:`lines_sql` binds (``tag``: the tag given at export, used when the format
    has none or the caller overrides it)."""
    out: dict[str, Any] = {f"s{i}": s for i, s in enumerate(fmt.seps, 1)}
    out.update(q0=fmt.q0, tag=tag if tag is not None else fmt.tag, rest=fmt.rest, eol=fmt.eol)
    if fmt.score is not None:
        out["score"] = fmt.score
    return out


#: Rows per batch read from DuckDB while the lines are made.
BATCH_ROWS = 200_000


def stored_rows(run_id: int) -> str:
    """The rows of a stored run, as :func:`lines_sql` reads them."""
    return f"(SELECT * FROM run_row_data WHERE run_id = {int(run_id)})"


def run_file_chunks(
    store: StoreHandle, rows: str, header: str | None, tag: str | None, fmt: LineFormat = LineFormat()
) -> Iterator[bytes]:
    """The bytes of the run file of ``rows`` (:func:`stored_rows`, or a fused run's rows before they
    are stored) in the format ``fmt``: ``header`` (the ir_metadata block), then the lines (the last
    without its line end when the format says so); ``tag``: the tag field (None: the format's)."""
    if header:
        yield header.encode("utf-8")
    # on the store's connection, which sees the temporary table of a fusion (a cursor would not)
    if fmt.arrow_made:
        batches = _arrow_made_lines(
            store, rows, LineFormat(**{**asdict(fmt), "tag": tag if tag is not None else fmt.tag})
        )
    else:
        rel = store.con.sql(lines_sql(rows, fmt), params=params(fmt, tag))
        batches = (text_bytes(b.column(0)) for b in _batches(rel) if b.num_rows)
    yield from batches if fmt.final_eol else without_final_eol(batches, fmt.eol.encode())


def _arrow_made_lines(store: StoreHandle, rows: str, fmt: LineFormat) -> Iterator[bytes]:
    """The lines of ``rows`` in a format spelt by Arrow, batch by batch, as the check at ingest made
    them (:func:`part_lines`): the fields read in file order from the store, the few scores DuckDB
    spells (:func:`shortest_fields`) on a cursor (the store's connection is reading the rows)."""
    aside = store.con.cursor()
    try:
        for batch in _batches(store.con.sql(f"SELECT {ROW_FIELDS} FROM {rows} ORDER BY line_no, topic")):
            if batch.num_rows:
                yield text_bytes(part_lines(aside, _table(batch), fmt).combine_chunks())
    finally:
        aside.close()


#: the fields of a run's lines that :func:`part_lines` reads, from rows as :func:`stored_rows` gives them
ROW_FIELDS = "topic, doc, coalesce(submitted_rank, rank) AS submitted_rank, score"


def _batches(rel):
    """The relation's rows as Arrow record batches of :data:`BATCH_ROWS` rows."""
    # DuckDB 2 names it to_arrow_reader (fetch_arrow_reader before)
    return (getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader)(BATCH_ROWS)


def _table(batch):
    import pyarrow as pa

    return pa.Table.from_batches([batch])


def text_bytes(lines) -> bytes:
    """The UTF-8 bytes of an Arrow string array's values, one after the other (its data buffer, no
    Python string per line)."""
    import numpy as np

    kind = str(lines.type)
    if kind not in ("string", "utf8", "large_string", "large_utf8"):  # (a string view: no one data buffer)
        return "".join(lines.to_pylist()).encode("utf-8")
    offsets_type = np.int64 if kind.startswith("large") else np.int32
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, dtype=offsets_type)
    start, end = int(bounds[lines.offset]), int(bounds[lines.offset + len(lines)])
    return data[start:end].to_pybytes()


def text_view(lines) -> memoryview:
    """The UTF-8 bytes of an Arrow string array's values, one after the other, as a view of its data
    buffer (no copy; :func:`text_bytes` copies them into ``bytes``)."""
    import numpy as np

    kind = str(lines.type)
    if kind not in ("string", "utf8", "large_string", "large_utf8"):
        return memoryview(text_bytes(lines))
    offsets_type = np.int64 if kind.startswith("large") else np.int32
    _, offsets, data = lines.buffers()
    if data is None:  # (no line has a byte)
        return memoryview(b"")
    bounds = np.frombuffer(offsets, dtype=offsets_type)
    return memoryview(data)[int(bounds[lines.offset]) : int(bounds[lines.offset + len(lines)])]


def without_final_eol(chunks: Iterator[bytes], eol: bytes) -> Iterator[bytes]:
    """The chunks with the line end of the last line taken off (a file whose last line has none)."""
    held = None
    for chunk in chunks:
        if held:
            yield held
        held = chunk
    if held:
        yield held[: -len(eol)] if held.endswith(eol) else held


# --------------------------------------------------------------------------- at ingest
def learn(lines: Sequence[bytes]) -> list[LineFormat]:
    """The formats that fit every sampled data line (with their line ends), the likeliest first
    (they differ in the score's spelling: ``-9.5`` is the shortest text and ``%.6g``, but only
    ``%.6g`` writes ``-9``); none when the lines differ in a separator, a constant field or their
    line end, or no spelling fits every score."""
    fmts = set()
    scores = []
    for raw in lines:
        eol = b"\r\n" if raw.endswith(b"\r\n") else b"\n" if raw.endswith(b"\n") else b""
        m = _LINE.fullmatch(raw[: len(raw) - len(eol)])
        if m is None or (not eol and raw is not lines[-1]):
            return []
        g = m.groups()
        try:
            seps = tuple(s.decode("utf-8") for s in g[1:11:2])
            fmts.add((seps, g[2].decode("utf-8"), g[10].decode("utf-8"), g[11].decode("utf-8"), eol or b"\n"))
        except UnicodeDecodeError:
            return []
        scores.append(g[8].decode("ascii", errors="replace"))
    if len(fmts) != 1 or not scores:
        return []
    seps, q0, tag, rest, eol = fmts.pop()
    # (the spellings Arrow makes: the shortest and a fixed number of decimals; the formats kept before: DuckDB)
    return [
        LineFormat(seps, q0, tag, rest, eol.decode("ascii"), spelling, spelt_by=_speller(spelling))
        for spelling in _spellings(scores)
    ]


def _speller(spelling: str | None) -> str:
    return "arrow" if spelling is None or fixed_decimals(spelling) is not None else "duckdb"


#: the most decimals :func:`fixed_fields` writes (its integer of the score's digits stays exact)
MAX_FIXED = 9


def fixed_decimals(spelling: str) -> int | None:
    """The number of decimals of a printf format ``%.Nf`` that :func:`fixed_fields` writes (None: another)."""
    m = re.fullmatch(r"%\.(\d+)f", spelling)
    return int(m.group(1)) if m and int(m.group(1)) <= MAX_FIXED else None


def fixed_fields(con, score, decimals: int) -> list:
    """The text of each double of ``score`` (an Arrow double array) as DuckDB's ``printf('%.Nf',
    score)`` writes it (N = ``decimals``), as one Arrow join input: the sign, then the integer of the
    scaled magnitude rounded (numpy) split at the point; DuckDB's own text where the scaled
    magnitude is within a few units in the last place of a half (the rounding of the product could
    differ from printf's of the exact double), or too large to be exact, or not a number."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    v = score.to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.abs(v) * 10.0**decimals
        other = ~(scaled < 2.0**52) | (np.abs(scaled - np.floor(scaled) - 0.5) <= 4 * np.spacing(scaled))
    digits = np.where(other, 0, np.rint(np.where(other, 0, scaled))).astype(np.int64)
    unit = 10**decimals
    parts = [pc.if_else(pa.array(np.signbit(v)), "-", ""), pc.cast(pa.array(digits // unit), pa.string())]
    if decimals:
        parts += [".", pc.utf8_slice_codeunits(pc.cast(pa.array(digits % unit + unit), pa.string()), 1)]
    text = pc.binary_join_element_wise(*parts, "")
    if other.any():
        duck = duckdb_text(con, score.filter(pa.array(other)), f"printf('%.{int(decimals)}f', score)")
        text = pc.replace_with_mask(text, pa.array(other), duck)
    return [text]


#: Arrow writes a double's shortest text as DuckDB does (``CAST(score AS VARCHAR)``, Python's repr)
#: between these magnitudes, but for a whole number's ``.0`` (``3``, not ``3.0``); below, ``0.00001``
#: for ``1e-05`` (down to :data:`ARROW_POINT`; further, ``1e-7`` for ``1e-07``); above, ``1e+12``
#: for ``1000000000000.0``
ARROW_LOW, ARROW_HIGH = 1e-4, 1e10
#: the least magnitude Arrow writes with a point (``0.000001``), not an exponent
ARROW_POINT = 1e-6
#: what Arrow's text of a whole double lacks (``3`` for ``3.0``)
WHOLE_SUFFIX = ".0"


def shortest_fields(con, score) -> list:
    """The shortest text of each double of ``score`` (an Arrow double array) as DuckDB's ``CAST(score
    AS VARCHAR)`` writes it, as Arrow join inputs, at a third of its CPU: Arrow's text; between
    :data:`ARROW_POINT` and :data:`ARROW_LOW` its digits with DuckDB's exponent
    (:func:`_with_exponent`); DuckDB's own text for the few doubles beyond; and
    :data:`WHOLE_SUFFIX` after the whole numbers Arrow writes without it (when there are any)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.cast(score, pa.string())
    v = score.to_numpy(zero_copy_only=False)
    size = np.abs(v)
    small = (size < ARROW_LOW) & (size >= ARROW_POINT)
    other = ((size < ARROW_POINT) & (v != 0)) | (size >= ARROW_HIGH)  # (nan: neither, as DuckDB writes it)
    if small.any():
        text = pc.replace_with_mask(text, pa.array(small), _with_exponent(text.filter(pa.array(small))))
    if other.any():
        duck = duckdb_text(con, score.filter(pa.array(other)), "CAST(score AS VARCHAR)")
        text = pc.replace_with_mask(text, pa.array(other), duck)
    whole = (v == np.trunc(v)) & ~other
    return [text, pc.if_else(pa.array(whole), WHOLE_SUFFIX, "")] if whole.any() else [text]


def _with_exponent(text):
    """Arrow's texts of doubles between :data:`ARROW_POINT` and :data:`ARROW_LOW` (``-0.0000979``)
    as DuckDB writes them (``-9.79e-05``): the same digits, the first before the point."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    negative = pc.starts_with(text, "-")
    digits = pc.utf8_ltrim(text, "-0.")  # (the significant digits: no point after the first nonzero)
    n_digits = pc.binary_length(digits).to_numpy(zero_copy_only=False)
    n_sign = negative.to_numpy(zero_copy_only=False).astype(np.int64)
    exponent = pc.binary_length(text).to_numpy(zero_copy_only=False) - n_sign - n_digits - 1  # (zeros after "0.", + 1)
    return pc.binary_join_element_wise(
        pc.if_else(negative, "-", ""),
        pc.utf8_slice_codeunits(digits, 0, 1),
        pc.if_else(pa.array(n_digits > 1), ".", ""),
        pc.utf8_slice_codeunits(digits, 1),
        pc.binary_join_element_wise("e-0", pc.cast(pa.array(exponent), pa.string()), ""),
        "",
    )


def _spellings(scores: Sequence[str]) -> list[str | None]:
    """The spellings that fit every score: None (the shortest text of the double), then printf
    formats (a fixed number of decimals, ``%.6f``; of significant digits, ``%.6g``)."""
    try:
        values = [float(s) for s in scores]
    except ValueError:
        return []
    out: list[str | None] = [None] if all(repr(v) == s for v, s in zip(values, scores)) else []
    first = scores[0]
    decimals = len(first.split(".", 1)[1]) if "." in first and "e" not in first.lower() else 0
    for spec in [f"%.{decimals}f", *(f"%.{p}g" for p in range(1, 18))]:
        if all(spec % v == s for v, s in zip(values, scores)):
            out.append(spec)
            break
    return out


def sample_lines(path: Path, n: int | None = None) -> list[bytes]:
    """The first ``n`` (:data:`SAMPLE_LINES`) data lines of the file (not blank, not a comment),
    with their line ends."""
    n = SAMPLE_LINES if n is None else n
    out: list[bytes] = []
    with open_bytes(path) as f:
        for raw in f:
            if is_content(raw.decode("utf-8", errors="replace")):
                out.append(raw)
                if len(out) >= n:
                    break
    return out


class ReadCheck:
    """The format learnt from a run file's first lines, checked while the fast reader reads the file
    (no second reading of its rows from the store). :meth:`verified` says whether the lines
    :func:`lines_sql` makes of the rows (a TREC file's rows in file order: ``topic, doc,
    submitted_rank, score``) are the file's content.

    In bulk (rows read with the fields' text, ``fast.RunReader(keep_text=True)``; a format of
    single ``delim`` separators, the reader's tag, no text after it, ``\\n`` line ends): each row's
    second field, rank and score as written are compared with what export writes of them
    (:func:`score_fields`; the rank's decimal digits), in Arrow, and the content's bytes counted as
    the reader read them (:meth:`verified`, :func:`made_is_read`): no line is made
    or hashed. Otherwise the lines are made as export makes them (:func:`part_lines`) and hashed one
    part after another; :meth:`verified` compares the hash with the file's."""

    def __init__(self, con, path: Path, header: str | None, delim: str | None = None, tag: str | None = None) -> None:
        fmts = learn(sample_lines(path))
        self.con, self.fmt, self.path = con, (fmts[0] if fmts else None), path
        self.header = header.encode("utf-8") if header else b""
        self.hash = hashlib.sha256(self.header)
        self.pending = b""  # the last line's end, hashed once another line follows
        self.refuted: LineFormat | None = None
        f = self.fmt
        #: checked in bulk (see the class docstring); None: by the lines' hash
        self.bulk: _Counts | None = None
        if f is not None and delim is not None and tag is not None and f.tag == tag and not f.rest:
            if f.eol == "\n" and all(sep == delim for sep in f.seps) and _comment_lines(self.header):
                self.bulk = _Counts(len(f"{f.q0}{tag}".encode()) + len(f.seps) + 1)

    def add(self, rows) -> None:
        """Check the next rows of the file (an Arrow table)."""
        if self.fmt is None:
            return
        if self.bulk is not None:
            if not set(TEXT_COLUMNS) <= set(
                rows.column_names
            ):  # (rows read without their text): checked after the read
                self.fmt = None
            elif not self.bulk.add(self.con, rows, self.fmt):
                self.refuted, self.fmt = self.fmt, None
            return
        import pyarrow as pa

        try:
            lines = part_lines(self.con, rows, self.fmt)
        except pa.ArrowException:  # (lines beyond an Arrow string array's 2 GB): checked after the read
            self.fmt = None
            return
        cut = len(self.fmt.eol.encode())
        for chunk in lines.chunks:
            text = text_view(chunk)
            if len(text):
                self.hash.update(self.pending)
                self.hash.update(text[: len(text) - cut])
                self.pending = bytes(text[len(text) - cut :])

    def verified(self, sha: str, read: Any = None) -> LineFormat | None:
        """The format, with whether the last line ends with its line end, when the lines made are
        the file's content (sha256 ``sha``; in bulk, ``read``: the reader's blocks, whose bytes and
        last byte it counted); None when they are not (or nothing was checked; then
        ``refuted`` is the format whose lines were not the file's, when every line was checked)."""
        if self.fmt is None:
            return None
        if self.bulk is not None:
            final_eol = None if read is None else made_is_read(self.bulk, self.header, read, self.path)
            if final_eol is not None:
                return LineFormat(**{**asdict(self.fmt), "final_eol": final_eol})
            self.refuted = self.fmt if read is not None else None
            return None
        with_eol = self.hash.copy()
        with_eol.update(self.pending)
        for final_eol, h in ((True, with_eol), (False, self.hash)):
            if h.hexdigest() == sha:
                return LineFormat(**{**asdict(self.fmt), "final_eol": final_eol})
        self.refuted = self.fmt
        return None


#: the fields' text as read that the check in bulk compares: the second field, the rank and the
#: score as written (kept in each part by ``fast.RunReader(keep_text=True)``)
TEXT_COLUMNS = ("q0", "rank_text", "score_text")


class _Counts:
    """What the check in bulk adds up: the rows, and the bytes of the lines export makes of them
    (every line with its end); ``fixed``: the bytes of a line besides its topic, docno, rank and score."""

    def __init__(self, fixed: int) -> None:
        self.fixed, self.rows, self.bytes = fixed, 0, 0

    def add(self, con, rows, fmt: LineFormat) -> bool:
        """Each row's second field, rank and score as written are what export writes (``fmt``);
        count its line's bytes."""
        import pyarrow as pa
        import pyarrow.compute as pc

        made = score_fields(con, rows, fmt)
        score = made[0] if len(made) == 1 else pc.binary_join_element_wise(*made, "")
        rank = pc.cast(rows.column("submitted_rank"), pa.string())
        same = (
            pc.all(pc.equal(rows.column("q0"), fmt.q0)).as_py() is not False
            and pc.all(pc.equal(rows.column("rank_text"), rank)).as_py() is not False
            and pc.all(pc.equal(rows.column("score_text"), score)).as_py() is not False
        )
        if not same:
            return False
        self.rows += rows.num_rows
        self.bytes += rows.num_rows * self.fixed + sum(
            pc.sum(pc.binary_length(rows.column(c))).as_py() or 0 for c in ("topic", "doc", "rank_text", "score_text")
        )
        return True


def _comment_lines(header: bytes) -> bool:
    """Every line of the header starts with ``#`` and ends with a line feed (none: no header)."""
    return not header or (header.endswith(b"\n") and all(ln.startswith(b"#") for ln in header[:-1].split(b"\n")))


def made_is_read(counts: _Counts, header: bytes, read: Any, path: Path) -> bool | None:
    """Whether the file's content is the header and the lines export makes of the rows checked in
    bulk: True (the last line with its end) or False (without), else None. The fast reader parsed
    every data line into six fields between single separators (no other blank, no CR, no quoting),
    stepped over the leading comment lines and, silently, over empty lines; each row's fields were
    found equal to the text export makes of them. So the content (``read``: the reader's blocks,
    its bytes and last byte) is the header and those lines when it starts with the header and has
    their bytes (the last line's end told by the content's last byte): an empty line or another
    comment line would add bytes (a shorter run of comment lines than the header cannot start with
    it: every line of the header starts with ``#``, and no line the reader parsed does)."""
    last_eol = read.last_byte == b"\n"
    if read.n_bytes != len(header) + counts.bytes - (0 if last_eol else 1):
        return None
    if header:
        with open_bytes(path) as f:
            if f.read(len(header)) != header:
                return None
    return last_eol


def part_lines(con, rows, fmt: LineFormat):
    """The lines (with their ends) of ``rows``, an Arrow table of a TREC file's rows in file order,
    as :func:`lines_sql` makes them with the format's own tag: an Arrow chunked string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    score = score_fields(con, rows, fmt)
    seps = fmt.seps
    # (the constant text between two fields as one piece: fewer inputs to join, 0.02 CPU-s per M lines)
    fields = [rows.column("topic"), f"{seps[0]}{fmt.q0}{seps[1]}", rows.column("doc"), seps[2],
              pc.cast(rows.column("submitted_rank"), pa.string()), seps[3], *score,
              f"{seps[4]}{fmt.tag}{fmt.rest}{fmt.eol}"]  # fmt: skip
    lines = pc.binary_join_element_wise(*fields, "")
    return lines if isinstance(lines, pa.ChunkedArray) else pa.chunked_array([lines])


def score_fields(con, rows, fmt: LineFormat) -> list:
    """The score's text of each of ``rows`` (an Arrow table) in the format ``fmt``, as Arrow join
    inputs: Arrow's (:func:`shortest_fields`, :func:`fixed_fields`) or DuckDB's (:func:`score_sql`)."""
    score = rows.column("score").combine_chunks()
    if fmt.arrow_made:
        decimals = None if fmt.score is None else fixed_decimals(fmt.score)
        return shortest_fields(con, score) if decimals is None else fixed_fields(con, score, decimals)
    literal = "'" + (fmt.score or "").replace("'", "''") + "'"
    return [duckdb_text(con, score, score_sql(fmt, literal))]


def duckdb_text(con, score, expr: str):
    """The text DuckDB's SQL ``expr`` (of the column ``score``) makes of each double of ``score``
    (an Arrow array), as one Arrow string array."""
    import pyarrow as pa

    spelt = con.from_arrow(pa.table({"score": score})).select(f"{expr} AS s")
    return spelt.to_arrow_table().column(0).combine_chunks().cast(pa.string())


def keep_read_formats(store: StoreHandle, formats: dict[int, LineFormat]) -> None:
    """Keep the formats checked as the runs were read (``{run_id: format}``), in one statement."""
    if formats:
        store.con.execute(
            "UPDATE run_meta SET line_format = f.fmt FROM (SELECT unnest(?::INTEGER[]) AS id, "
            "unnest(?::VARCHAR[]) AS fmt) f WHERE run_meta.run_id = f.id",
            [list(formats), [f.to_json() for f in formats.values()]],
        )


def keep_run_text(
    store: StoreHandle, run_id: int, path: Path, sha: str, header: str | None, refuted: LineFormat | None = None
) -> str:
    """Keep what gives the run file at ``path`` back byte for byte (see the module docstring):
    ``'format'`` (its lines have one shape) or ``'text'`` (its text, compressed). ``refuted``: a
    format the check as read found the lines not to have (not made and hashed again)."""
    for fmt in learn(sample_lines(path))[:MAX_TRIES]:
        if fmt == refuted:
            continue
        final_eol = _final_eol(run_file_chunks(store, stored_rows(run_id), header, None, fmt), fmt, sha)
        if final_eol is not None:
            fmt = LineFormat(**{**asdict(fmt), "final_eol": final_eol})
            store.con.execute("UPDATE run_meta SET line_format = ? WHERE run_id = ?", [fmt.to_json(), run_id])
            return "format"
    _keep_text(store, run_id, path)
    return "text"


def _final_eol(chunks: Iterator[bytes], fmt: LineFormat, sha: str) -> bool | None:
    """True when the chunks (every line with its end) hash to ``sha``, False when they do without
    the last line's end, None when neither."""
    h, eol, last = hashlib.sha256(), fmt.eol.encode(), b""
    for chunk in chunks:
        h.update(last)
        last = chunk
    with_eol = h.copy()
    with_eol.update(last)
    if with_eol.hexdigest() == sha:
        return True
    if last.endswith(eol):
        h.update(last[: -len(eol)])
        if h.hexdigest() == sha:
            return False
    return None


def _keep_text(store: StoreHandle, run_id: int, path: Path) -> None:
    import pyarrow as pa

    codec = pa.Codec(CODEC)
    with open_bytes(path) as f:
        part = 0
        while data := f.read(PART_BYTES):
            store.con.execute(
                "INSERT INTO run_text_data VALUES (?, ?, ?, ?, ?)",
                [run_id, part, CODEC, len(data), codec.compress(data, asbytes=True)],
            )
            part += 1


def stored_text(store: StoreHandle, run_id: int) -> Iterator[bytes] | None:
    """The kept text of a run, part by part (None when the store keeps none)."""
    import pyarrow as pa

    parts = store.con.execute("SELECT part FROM run_text_data WHERE run_id = ? ORDER BY part", [run_id]).fetchall()
    if not parts:
        return None

    def read() -> Iterator[bytes]:
        for (part,) in parts:
            codec_name, size, data = store.con.execute(
                "SELECT codec, raw_bytes, data FROM run_text_data WHERE run_id = ? AND part = ?", [run_id, part]
            ).fetchall()[0]
            yield pa.Codec(codec_name).decompress(data, decompressed_size=size, asbytes=True)

    return read()


def line_format(store: StoreHandle, run_id: int) -> LineFormat | None:
    """The run's kept line format (None when the store keeps none)."""
    (text,) = store.con.execute("SELECT line_format FROM run_meta WHERE run_id = ?", [run_id]).fetchall()[0]
    return LineFormat.from_json(text) if text else None

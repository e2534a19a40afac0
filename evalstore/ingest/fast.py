"""The fast run reader: one pass over a cleanly delimited TREC run file, from bytes to ranked rows.

A TREC run whose first line is six fields separated by single tabs (or single spaces) is read here,
in one pass per file, without DuckDB, in blocks of about 2 MB of whole lines
(:mod:`evalstore.ingest.blocks`), so that memory stays a few blocks whatever the file's size:

* the file's bytes are read once (gzip decompressed as a stream); the content hash (sha256 of the
  decompressed bytes, :func:`evalstore.ingest.files.content_sha256`'s value) is taken over them;
* leading comment lines (an ir_metadata header, :mod:`evalstore.ingest.ir_metadata`) are stepped
  over (the content hash covers them);
* one scan of the bytes (``bytes.translate``) refuses any byte the general reader would treat
  differently: the other whitespace character, CR, control bytes; and a few substring searches
  refuse empty fields, ``#`` comment lines and a byte order mark;
* Arrow's CSV parser splits the lines (strict: six columns) with the score typed as a double and the
  rank as text, which must be plain digits; every line must carry the first line's tag;
* the rows are handed on in parts of whole topics: the last topic of a block waits for the next
  block, and a topic found in two places of the file (a file that does not list each topic in one
  block) goes to the general reader;
* the evaluation rank (trec_eval's order: score descending, ties by docno descending, byte-wise) is
  taken from the file order where the part already lists each topic in one block by descending
  score (most runs do): only the rows of tied scores are sorted, by docno. Other parts are sorted
  whole;
* repeated (topic, docno) pairs are screened on integer codes (a dictionary of the part's docnos;
  a topic's rows are all in one part).

Anything unusual (a line the general reader would split or judge differently, a bad number, another
tag, a duplicate, an empty file, a topic in two places) makes :func:`read_run` return None
(:meth:`RunReader.parts` raise :class:`Declined`): the file then goes to the general reader
(:mod:`evalstore.ingest.readers`), which gives the exact error message or the same rows. So the two
readers always agree (tests/evalstore/ingest/test_fast.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from . import blocks
from .blocks import LineBlocks, Unreadable
from .ir_metadata import leading_comment_bytes
from .run_text import TEXT_COLUMNS  # (the fields' text kept with keep_text, for ReadCheck)

#: A file that may hold a line this long goes to the general reader, which knows DuckDB's limit
#: (max_line_size, 2 MB) and says so.
LONG_LINE = 1 << 20

_PRINTABLE = bytes(b for b in range(256) if b >= 0x21 and b != 0x7F)
#: Bytes allowed in a fast file besides printable ones: the delimiter and the line feed.
_GOOD = {"\t": _PRINTABLE + b"\t\n", " ": _PRINTABLE + b" \n"}
_BOM = b"\xef\xbb\xbf"


def csv_options(column_types: dict[str, pa.DataType]) -> tuple[pcsv.ReadOptions, pcsv.ConvertOptions]:
    """Arrow's reader of a whitespace-separated TREC-style file with these columns, in order: every
    value as written (no nulls, no booleans), one thread, 4 MB blocks (with :data:`PARSE`)."""
    read = pcsv.ReadOptions(column_names=list(column_types), use_threads=False, block_size=1 << 22)
    convert = pcsv.ConvertOptions(
        column_types=column_types,
        null_values=[],
        true_values=[],
        false_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    return read, convert


#: the parse options of each delimiter a fast file may use (no quoting, no escapes)
PARSE = {
    d: pcsv.ParseOptions(delimiter=d, quote_char=False, escape_char=False, double_quote=False, newlines_in_values=False)
    for d in ("\t", " ")
}
_COLUMNS = {
    "topic": pa.string(),
    "q0": pa.string(),
    "doc": pa.string(),
    "rank": pa.string(),
    "score": pa.float64(),
    "tag": pa.string(),
}
_READ, _CONVERT = csv_options(_COLUMNS)
#: with ``keep_text``: the score read as text, then cast to a double (Arrow's one parser of doubles)
_CONVERT_TEXT = csv_options({**_COLUMNS, "score": pa.string()})[1]


@dataclass
class FastRun:
    """The rows of one run file: ``topic, doc, submitted_rank, score, ln, rank`` (ln: the content
    line index; rank: trec_eval's evaluation rank), its content hash and size."""

    table: pa.Table
    sha: str | None  # of the content (decompressed)
    file_sha: str | None  # of the file as given (the same for an uncompressed file)
    n_rows: int
    n_topics: int
    counts: pa.Table | None = None  # (topic, n): the rows per topic, when ``table`` was narrowed


@dataclass
class Part:
    """Rows of a run file on whole topics (every row of each of its topics; no other part has
    them): ``topic, doc, submitted_rank, score, ln, rank`` as in :class:`FastRun`, or with
    ``keep_docs`` only the rows of those docnos, and :attr:`counts`, each topic's rows (``topic, n``)."""

    table: pa.Table
    counts: pa.Table | None
    n_rows: int  # rows read (before narrowing)


class Declined(Exception):
    """The general reader must read the file (see the module docstring)."""


class RunReader:
    """A run file read block by block (:class:`~evalstore.ingest.blocks.LineBlocks`): :meth:`parts`
    gives its rows as :class:`Part` s of whole topics, so that memory holds a few blocks (and the
    largest topic) whatever the file's size. The rows of the last topic of a block wait for the
    next block; a topic met again after its part was given (the file does not list each topic in
    one block) declines the file, like anything else the general reader must judge. After a
    complete iteration: ``sha``, ``file_sha`` (with ``want_sha``), ``n_rows``,
    ``n_topics``."""

    def __init__(
        self,
        path: Path,
        compression: str,
        delim: str,
        tag0: str | None,
        *,
        want_sha: bool = True,
        keep_docs: pa.Array | None = None,
        block_bytes: int | None = None,
        keep_text: bool = False,
    ) -> None:
        self.delim, self.tag0, self.keep_docs = delim, tag0, keep_docs
        self.keep_text = keep_text and keep_docs is None
        size = block_bytes or blocks.BLOCK_BYTES
        self.blocks = LineBlocks(path, compression, block_bytes=size, want_sha=want_sha, max_line=LONG_LINE)
        self.sha: str | None = None
        self.file_sha: str | None = None
        self.n_rows = 0
        self.n_topics = 0
        self._seen = _Seen()

    def parts(self) -> Iterator[Part]:
        """The file's parts in file order; :class:`Declined` when the general reader must read it."""
        if self.tag0 is None:
            raise Declined
        carry: pa.Table | None = None
        try:
            block_iter = iter(self.blocks)
            data = next(block_iter, None)
            header = True
            while data is not None:
                after = next(block_iter, None)  # (a file of one block is one part, in whatever order)
                if header:  # leading comment lines: an ir_metadata header (evalstore.ingest.ir_metadata)
                    skip = leading_comment_bytes(data)
                    data, header = (data[skip:], skip == len(data)) if skip else (data, False)
                    if header:  # a block of comment lines only
                        data = after
                        continue
                if not clean(data, self.delim):
                    raise Declined
                t = _parsed(data, self.delim, self.n_rows, self.keep_text)
                self.n_rows += t.num_rows
                if carry is not None:
                    t = pa.concat_tables([carry, t])
                t, carry = trailing_topic(t) if after is not None else (t, None)
                if t.num_rows:
                    yield self._part(t)
                data = after
        except Unreadable:
            raise Declined from None
        if self.n_rows == 0:
            raise Declined
        self.sha, self.file_sha, self.n_topics = self.blocks.sha, self.blocks.file_sha, self._seen.count

    def _part(self, t: pa.Table) -> Part:
        ranked = _ranked(t, str(self.tag0))
        if ranked is None:
            raise Declined
        table, topics, docs = ranked
        if not self._seen.add(topics.dictionary):
            raise Declined  # a topic in two places of the file
        if self.keep_text:  # (the rows keep their order: the text of each row's fields as read)
            for name, col in zip(TEXT_COLUMNS, ("q0", "rank", "score_text")):
                table = table.append_column(name, t.column(col))
        if self.keep_docs is None:
            return Part(table, None, table.num_rows)
        narrow, counts = narrowed(table, topics, docs, self.keep_docs)
        return Part(narrow, counts, table.num_rows)


class _Seen:
    """The topics of a file's parts so far, to find a topic met again (the file does not list each
    topic in one place). While the parts' topics come in ascending byte order, each part's after the
    last one's (most files), comparing neighbours shows that none repeats: no set of Python strings
    (a million topics: 0.3 CPU-s); from the first part out of order on, a set of them."""

    def __init__(self) -> None:
        self.count = 0
        self._parts: list[pa.Array] = []  # the topics of each part, while in order
        self._set: set[str] | None = None

    def add(self, names: pa.Array) -> bool:
        """Add a part's topics (distinct); False when one of them was added before."""
        self.count += len(names)
        if not len(names):
            return True
        if self._set is None:
            last = self._parts[-1] if self._parts else None
            if ascending(names) and (last is None or last[-1].as_py() < names[0].as_py()):
                self._parts.append(names)
                return True
            self._set = {t for part in self._parts for t in part.to_pylist()}
            self._parts = []
        new = names.to_pylist()
        if not self._set.isdisjoint(new):
            return False
        self._set.update(new)
        return True


def ascending(strings: pa.Array) -> bool:
    """Each string is greater than the one before (byte order): the strings are distinct."""
    n = len(strings)
    return n < 2 or bool(pc.all(pc.less(strings.slice(0, n - 1), strings.slice(1))).as_py())


def block_starts(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Where each block of equal neighbouring values of ``values`` starts (0 first; none when empty)."""
    n = len(values)
    if not n:
        return np.zeros(0, dtype=np.int64)
    change = pc.not_equal(values.slice(1), values.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    return np.flatnonzero(np.concatenate(([True], change)))


def topic_blocks(topic: pa.Array) -> pa.DictionaryArray:
    """The rows' topics dictionary-encoded, as Arrow's ``dictionary_encode`` codes them. Rows that
    list each topic in one block (most files, a dict's rows) are coded by their blocks, without
    hashing every row (1 M rows: 0.015 against 0.13 CPU-s; the blocks' topics told distinct by
    their ascending order, else by hashing them alone); others by ``dictionary_encode``."""
    n = len(topic)
    if n:
        starts = block_starts(topic)
        names = topic.take(pa.array(starts))
        if ascending(names) or len(pc.unique(names)) == len(names):
            codes = np.repeat(np.arange(len(starts), dtype=np.int32), np.diff(np.append(starts, n)))
            return pa.DictionaryArray.from_arrays(pa.array(codes), names)
    return pc.dictionary_encode(topic)


def encoded(values: pa.Array) -> pa.DictionaryArray:
    """``values`` dictionary-encoded; as they are when they already are (Arrow before 15 has no
    ``dictionary_encode`` of a dictionary array: the qrels' coded table)."""
    return values if pa.types.is_dictionary(values.type) else pc.dictionary_encode(values)


def one_array(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """``col`` as one array: its only chunk as it is (``combine_chunks`` copies even one chunk: the
    docnos of 10 M rows are 170 MB), else its chunks concatenated."""
    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def clean(data: bytes, delim: str) -> bool:
    """The bytes hold no other whitespace character, CR or control byte, and no byte order mark:
    nothing the general reader would split differently from ``delim``. (Empty fields and comment
    lines are found on the parsed columns.)"""
    if not data or data.startswith(_BOM):
        return False
    return not data.translate(None, _GOOD[delim])


def read_run(
    path: Path,
    compression: str,
    delim: str,
    tag0: str | None,
    *,
    want_sha: bool = True,
    keep_docs: pa.Array | None = None,
    block_bytes: int | None = None,
) -> FastRun | None:
    """The run file's rows, ranked, in one table (its parts, :class:`RunReader`), or None when the
    general reader must read it (see the module docstring). ``tag0``: the tag of its first line,
    which every line must carry. ``keep_docs``: keep only the rows of these docnos (those some qrels
    set judges), and count each topic's rows (:attr:`FastRun.counts`)."""
    reader = RunReader(path, compression, delim, tag0, want_sha=want_sha, keep_docs=keep_docs, block_bytes=block_bytes)
    try:
        parts = list(reader.parts())
    except Declined:
        return None
    table = pa.concat_tables([p.table for p in parts])
    counts = pa.concat_tables([p.counts for p in parts if p.counts is not None]) if keep_docs is not None else None
    return FastRun(table, reader.sha, reader.file_sha, reader.n_rows, reader.n_topics, counts)


def _parsed(data: bytes, delim: str, offset: int, keep_text: bool = False) -> pa.Table:
    """A block's lines as columns, with ``ln`` (the content line index, counted on from ``offset``);
    ``keep_text``: and ``score_text``, the score as written."""
    try:
        convert = _CONVERT_TEXT if keep_text else _CONVERT
        t = pcsv.read_csv(pa.py_buffer(data), read_options=_READ, parse_options=PARSE[delim], convert_options=convert)
        if keep_text:
            text = t.column("score")
            t = t.set_column(t.schema.get_field_index("score"), "score", pc.cast(text, pa.float64()))
            t = t.append_column("score_text", text)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise Declined from None  # a line with another number of fields, a bad score, bytes that are not UTF-8
    return t.append_column("ln", pa.array(np.arange(offset + 1, offset + t.num_rows + 1, dtype=np.int64)))


def trailing_topic(t: pa.Table) -> tuple[pa.Table, pa.Table | None]:
    """The rows before the trailing rows of the block's last topic, and those rows (the topic may go
    on in the next block)."""
    if t.num_rows == 0:
        return t, None
    topic = t.column("topic")
    other = pc.indices_nonzero(pc.not_equal(topic, topic[-1]))
    start = other[-1].as_py() + 1 if len(other) else 0
    return t.slice(0, start), t.slice(start)


def _ranked(t: pa.Table, tag0: str) -> tuple[pa.Table, pa.DictionaryArray, pa.DictionaryArray | None] | None:
    """Rows of whole topics checked and ranked, with their topics dictionary-encoded (and their
    docnos, when those were encoded to find repeats); None when the general reader must judge them."""
    tag = t.column("tag")
    if not pc.all(pc.equal(tag, tag0)).as_py():
        return None
    text = one_array(t.column("rank"))
    if not pc.all(pc.ascii_is_decimal(text)).as_py():
        return None  # a sign, or not an integer: the general reader decides
    try:
        submitted = pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    score = one_array(t.column("score"))
    if not pc.all(pc.is_finite(score)).as_py():
        return None
    topic = one_array(t.column("topic"))
    doc = one_array(t.column("doc"))
    topics = topic_blocks(topic)
    tcode = topics.indices.to_numpy()
    n_topics = len(topics.dictionary)
    # an empty field (a repeated or leading delimiter) or a comment line: the general reader decides
    if not (_nonempty(topics.dictionary) and _nonempty(doc) and _nonempty(t.column("q0"))):
        return None
    if pc.any(pc.starts_with(topics.dictionary, "#")).as_py():
        return None
    if sum(pc.max(pc.binary_length(t.column(c))).as_py() for c in ("topic", "q0", "doc", "rank", "tag")) > LONG_LINE:
        return None
    docs = None
    if repeats_told_apart(tcode, doc) is not False:  # (a repeat, or docnos not told apart by their keys)
        docs = pc.dictionary_encode(doc)
        if has_duplicates(tcode, docs.indices.to_numpy(), len(docs.dictionary)):
            return None
    rank = evaluation_rank(tcode, n_topics, score.to_numpy(), doc)
    table = pa.table(
        {
            "topic": topic,
            "doc": doc,
            "submitted_rank": submitted,
            "score": score,
            "ln": one_array(t.column("ln")),
            "rank": pa.array(rank),
        }
    )
    return table, topics, docs


def narrowed(
    table: pa.Table, topics: pa.DictionaryArray, docs: pa.DictionaryArray | None, keep_docs: pa.Array
) -> tuple[pa.Table, pa.Table]:
    """The rows of ``table`` whose docno is one of ``keep_docs`` (looked up once per distinct docno
    when they are dictionary-encoded, else row by row), and each topic's count of rows (``topic, n``)."""
    if docs is None:
        kept = pc.is_in(one_array(table.column("doc")), value_set=keep_docs).to_numpy(zero_copy_only=False)
    else:
        kept = pc.is_in(docs.dictionary, value_set=keep_docs).to_numpy(zero_copy_only=False)[docs.indices.to_numpy()]
    n = np.bincount(topics.indices.to_numpy(), minlength=len(topics.dictionary))
    return table.filter(pa.array(kept)), pa.table({"topic": topics.dictionary, "n": pa.array(n)})


def ranked_rows(table: pa.Table, keep_docs: pa.Array | None) -> tuple[pa.Table, pa.Table | None]:
    """A run given in memory (``topic, doc, score, ln``) with its rank in trec_eval's order and,
    with ``keep_docs``, narrowed as the fast reader narrows a file's rows (and its counts). Rows
    already in score order within topic blocks are ranked in one pass; others, narrowed, by ranking
    only the kept rows (:func:`kept_ranks`) where they are few; else sorted."""
    topics = encoded(one_array(table.column("topic")))
    tcode, n_topics = topics.indices.to_numpy(), len(topics.dictionary)
    doc = one_array(table.column("doc"))
    # (the judged docnos looked up row by row: no dictionary of the run's docnos, as many as its
    # rows in most runs, 1.3 GB of hash table and copies at 10 M rows)
    kept = None if keep_docs is None else pc.is_in(doc, value_set=keep_docs).to_numpy(zero_copy_only=False)
    ranked = table
    if "rank" not in table.column_names:  # (a run read from a file comes ranked)
        values = one_array(table.column("score")).to_numpy()
        # rows in score order within topic blocks (dicts made from ranked lists): every row ranked
        # in one pass, no sort (10 M rows: 0.12 CPU-s against 0.45 for the judged rows' pairs)
        if kept is not None and not in_score_blocks(tcode, n_topics, values):
            ranks = kept_ranks(tcode, n_topics, values, doc, kept)
            if ranks is not None:
                return table.filter(pa.array(kept)).append_column("rank", pa.array(ranks)), _counts(topics, tcode)
        ranked = table.append_column("rank", pa.array(evaluation_rank(tcode, n_topics, values, doc)))
    if kept is None:
        return ranked, None
    return ranked.filter(pa.array(kept)), _counts(topics, tcode)


def _counts(topics: pa.DictionaryArray, tcode: np.ndarray) -> pa.Table:
    """Each topic's number of rows (``topic, n``)."""
    return pa.table({"topic": topics.dictionary, "n": pa.array(np.bincount(tcode, minlength=len(topics.dictionary)))})


#: :func:`kept_ranks` compares each row with the kept rows of its topic while that makes at most
#: this many comparisons per row (else a sort of the run is cheaper).
KEPT_PAIRS_PER_ROW = 4
#: :func:`kept_ranks` makes its (row, kept row) pairs this many at a time: its memory stays a few
#: arrays of this length, whatever the run's size (10 M rows made 30 M pairs, 1.5 GB at once).
PAIRS_PER_BLOCK = 1 << 21


def kept_ranks(
    tcode: np.ndarray, n_topics: int, score: np.ndarray, doc: pa.Array, kept: np.ndarray
) -> np.ndarray | None:
    """trec_eval's rank (as :func:`evaluation_rank`) of the ``kept`` rows only, in their order,
    without sorting the run: one plus the rows of the same topic ranked above each (a higher score,
    or an equal score and a larger docno, byte-wise). None when the kept rows are too many for
    that to beat a sort (:data:`KEPT_PAIRS_PER_ROW`). The pairs are made in blocks of rows of at
    most :data:`PAIRS_PER_BLOCK` pairs (a row's pairs stay in one block)."""
    n = len(tcode)
    k = np.bincount(tcode[kept], minlength=n_topics)
    reps = k[tcode]  # each row meets the kept rows of its topic
    ends = np.cumsum(reps)
    pairs = int(ends[-1]) if n else 0
    if pairs > KEPT_PAIRS_PER_ROW * max(n, 1):
        return None
    K = np.flatnonzero(kept)
    order = K[np.argsort(tcode[K], kind="stable")]  # the kept rows by topic
    start = np.concatenate(([0], np.cumsum(k)[:-1]))
    above_count = np.zeros(len(order), dtype=np.int64)
    a = 0
    while a < n:
        done = int(ends[a - 1]) if a else 0
        b = max(a + 1, int(np.searchsorted(ends, done + PAIRS_PER_BLOCK, side="right")))
        above_count += _ranked_above(tcode, score, doc, reps[a:b], a, start, order)
        a = b
    rank = np.empty(n, dtype=np.int32)
    rank[order] = 1 + above_count
    return rank[K]


def _ranked_above(
    tcode: np.ndarray, score: np.ndarray, doc: pa.Array, reps: np.ndarray, a: int, start: np.ndarray, order: np.ndarray
) -> np.ndarray:
    """For each kept row (``order``), how many of the rows ``a, a + 1, ...`` (``reps``: each one's
    number of kept rows in its topic) rank above it."""
    m = int(reps.sum())
    if m == 0:
        return np.zeros(len(order), dtype=np.int64)
    row = np.repeat(np.arange(a, a + len(reps), dtype=np.int64), reps)
    first = np.repeat(np.cumsum(reps) - reps, reps)
    slot = start[tcode[row]] + (np.arange(m, dtype=np.int64) - first)  # the kept row's place in order
    other = order[slot]
    s_row, s_other = score[row], score[other]
    above = s_row > s_other
    tie = np.flatnonzero(s_row == s_other)
    if len(tie):
        larger = pc.greater(doc.take(pa.array(row[tie])), doc.take(pa.array(other[tie]))).to_numpy(zero_copy_only=False)
        above[tie[larger]] = True
    return np.bincount(slot, weights=above, minlength=len(order)).astype(np.int64)


#: Docnos of at most this many bytes are told apart by :func:`docno_keys` (longer: encoded).
KEY_BYTES = 32
#: The odd multipliers folding a docno's 8-byte words into one key (any odd numbers would do).
_FOLD = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64)


def docno_keys(doc: pa.Array) -> np.ndarray | None:
    """A 64-bit key of each docno, equal for equal docnos: its bytes (zero-padded to whole 8-byte
    words) as one word, or several words folded by multiplying and adding; None for docnos of
    different lengths that are not all ASCII, or longer than :data:`KEY_BYTES`. (Docnos of up to
    8 bytes have keys as distinct as they are; longer ones may share a key: see
    :func:`repeats_told_apart`.)"""
    n = len(doc)
    if not n or doc.type != pa.string() or doc.null_count:
        return None
    lengths = pc.binary_length(doc)
    lo, hi = (v.as_py() for v in pc.min_max(lengths).values())
    if hi > KEY_BYTES or lo < 1:
        return None
    if lo != hi:  # (no NUL in a docno the fast reader keeps: padding with it keeps them apart)
        if not pc.all(pc.string_is_ascii(doc)).as_py():
            return None
        doc = pc.utf8_rpad(doc, width=hi, padding="\x00")
    offsets = np.frombuffer(doc.buffers()[1], np.int32, count=n + 1, offset=4 * doc.offset)
    data = np.frombuffer(doc.buffers()[2], np.uint8)[offsets[0] : offsets[0] + n * hi].reshape(n, hi)
    words = -(-hi // 8)
    cells = np.zeros((n, 8 * words), dtype=np.uint8)
    cells[:, :hi] = data
    packed = cells.view(np.uint64)
    key = packed[:, 0].copy()
    for j in range(1, words):
        key = key * _FOLD[j] + packed[:, j]
    return key


def repeats_told_apart(tcode: np.ndarray, doc: pa.Array) -> bool | None:
    """False when no (topic, docno) pair occurs twice, shown by the docnos' keys
    (:func:`docno_keys`: equal docnos have equal keys) all differing within each topic; found by
    sorting, without hashing the docnos (1 M rows: 0.01 against 0.11 CPU-s with the docnos'
    dictionary). Where each topic's rows are one block, the blocks are sorted as the rows of a
    matrix (many short sorts: ten times faster than one); else the keys with their topic codes
    folded in are sorted whole. None when it cannot tell (a repeat, keys that meet by chance,
    docnos without keys): the docnos' dictionary decides (:func:`has_duplicates`)."""
    keys = docno_keys(doc)
    if keys is None:
        return None
    n = len(keys)
    starts = np.flatnonzero(np.concatenate(([True], tcode[1:] != tcode[:-1])))
    lengths = np.diff(np.append(starts, n))
    width = int(lengths.max())
    if np.bincount(tcode[starts]).max() > 1 or len(starts) * width > PADDED_CELLS_PER_ROW * n:
        key = np.sort(keys * _FOLD[0] + tcode.astype(np.uint64))
        return None if bool((key[1:] == key[:-1]).any()) else False
    top = np.iinfo(np.uint64).max  # the padding, after every key (a key equal to it: cannot tell)
    if bool((keys == top).any()):
        return None
    cells = np.sort(_as_rows(keys, starts, lengths, width, top), axis=1)
    same = cells[:, 1:] == cells[:, :-1]
    same &= np.arange(width - 1)[None, :] < (lengths - 1)[:, None]  # (not the padding)
    return None if bool(same.any()) else False


def _nonempty(strings: pa.Array | pa.ChunkedArray) -> bool:
    return len(strings) == 0 or pc.min(pc.binary_length(strings)).as_py() > 0


def has_duplicates(tcode: np.ndarray, dcode: np.ndarray, n_docs: int) -> bool:
    """A (topic, docno) pair occurs twice (on the dictionary codes of both; sorted, which numpy does
    several times faster than Arrow hashes them: 1 M keys, 0.06 against 0.2 CPU-s)."""
    key = np.sort(tcode.astype(np.int64) * n_docs + dcode)
    return bool((key[1:] == key[:-1]).any())


def in_score_blocks(tcode: np.ndarray, n_topics: int, score: np.ndarray) -> bool:
    """Each topic's rows are one block, by descending score: trec_eval's rank needs no sort
    (:func:`evaluation_rank`)."""
    change = tcode[1:] != tcode[:-1]
    return bool(np.count_nonzero(change) + 1 == n_topics and not (score[1:] > score[:-1])[~change].any())


def evaluation_rank(tcode: np.ndarray, n_topics: int, score: np.ndarray, doc: pa.Array) -> np.ndarray:
    """trec_eval's rank of each row (score descending, ties by docno descending, byte-wise), 1-based
    within its topic, in the rows' order. A file that lists each topic in one block by descending
    score needs no sort: only its tied rows are ordered by docno. Other rows are first ordered by
    topic and descending score (numbers only, not the docnos), then ranked the same way."""
    n = len(tcode)
    change = tcode[1:] != tcode[:-1]
    if np.count_nonzero(change) + 1 == n_topics:  # each topic in one block (a dict's rows)
        if not (score[1:] > score[:-1])[~change].any():
            return _rank_in_blocks(change, score, doc, None)
        order = _order_in_blocks(change, score)
        if order is not None:
            rank = np.empty(n, dtype=np.int32)
            rank[order] = _rank_in_blocks(change, score[order], doc, order)
            return rank
    # by descending score (equal scores in any order: their docnos order them below), then stably
    # by topic (a radix sort on 16-bit codes): half a lexsort's time
    order = np.argsort(-score)
    codes = tcode[order]
    order = order[np.argsort(codes.astype(np.int16) if n_topics < 2**15 else codes, kind="stable")]
    ts = tcode[order]
    rank = np.empty(n, dtype=np.int32)
    rank[order] = _rank_in_blocks(ts[1:] != ts[:-1], score[order], doc, order)
    return rank


#: :func:`_order_in_blocks` sorts the topics' blocks as the rows of one matrix, padded to the longest
#: block, while the matrix holds at most this many cells per row.
PADDED_CELLS_PER_ROW = 2


def _order_in_blocks(change: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The rows' order by descending score within each block (``change``: a new block starts at the
    next row), the blocks kept in place, or None when the blocks' lengths differ too much for one
    matrix (:data:`PADDED_CELLS_PER_ROW`). Each block is sorted as a row of a matrix padded with
    +inf (after every finite negated score): many short sorts, several times faster than one sort
    of all rows (1,000 x 100: 0.8 against 6-7 ms)."""
    n = len(score)
    starts = np.flatnonzero(np.concatenate(([True], change)))
    lengths = np.diff(np.append(starts, n))
    width = int(lengths.max())
    if len(starts) * width > PADDED_CELLS_PER_ROW * n:
        return None
    within = np.argsort(_as_rows(-score, starts, lengths, width, np.inf), axis=1)
    real = np.arange(width)[None, :] < lengths[:, None]
    return (starts[:, None] + within)[real]


def _as_rows(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int, pad: float) -> np.ndarray:
    """``values`` in blocks (each ``lengths`` long, from ``starts``) as the rows of a matrix of
    ``width`` columns, each row padded with ``pad`` after its block (no copy when every block is
    ``width`` long)."""
    if len(starts) * width == len(values):  # blocks of one length (most files)
        return values.reshape(len(starts), width)
    cells = np.full((len(starts), width), pad, dtype=values.dtype)
    block = np.repeat(np.arange(len(starts)), lengths)
    cells[block, np.arange(len(values), dtype=np.int64) - starts[block]] = values
    return cells


def _rank_in_blocks(change: np.ndarray, score: np.ndarray, doc: pa.Array, perm: np.ndarray | None) -> np.ndarray:
    """The ranks of rows listed topic by topic (``change``: a new topic starts at the next row) in
    descending score: the position in the block, the tied rows ordered by docno (``doc[perm[i]]``
    is row i's docno; without ``perm``, ``doc[i]``)."""
    n = len(score)
    starts = np.flatnonzero(np.concatenate(([True], change)))
    # (each row's block start repeated, not a cumulative sum of the flags: 0.03 against 0.25 s at 10 M rows)
    first = np.repeat(starts.astype(np.int32), np.diff(np.append(starts, n)))
    rank = np.arange(1, n + 1, dtype=np.int32) - first
    tie = ~change & (score[1:] == score[:-1])
    if tie.any():
        tied = np.zeros(n, dtype=bool)
        tied[:-1] |= tie
        tied[1:] |= tie
        slots = np.flatnonzero(tied)
        first = np.ones(len(slots), dtype=bool)
        first[1:] = ~tie[slots[1:] - 1]
        group = np.cumsum(first)
        docs = doc.take(pa.array(slots if perm is None else perm[slots]))
        order = pc.sort_indices(
            pa.table({"g": group, "doc": docs}), sort_keys=[("g", "ascending"), ("doc", "descending")]
        ).to_numpy()
        rank[slots[order]] = rank[slots]
    return rank

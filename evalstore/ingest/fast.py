"""The fast run reader: one pass over a cleanly delimited TREC run file, from bytes to ranked rows.

A TREC run whose first line is six fields separated by single tabs (or single spaces) is read here,
in one pass per file, without DuckDB:

* the file's bytes are read once (gzip decompressed once); the content hash (sha256 of the
  decompressed bytes, :func:`evalstore.ingest.files.content_sha256`'s value) is taken over them;
* leading comment lines (an ir_metadata header, :mod:`evalstore.ingest.ir_metadata`) are stepped
  over (the content hash covers them);
* one scan of the bytes (``bytes.translate``) refuses any byte the general reader would treat
  differently: the other whitespace character, CR, control bytes; and a few substring searches
  refuse empty fields, ``#`` comment lines and a byte order mark;
* Arrow's CSV parser splits the lines (strict: six columns) with the score typed as a double and the
  rank as text, which must be plain digits; every line must carry the first line's tag;
* the evaluation rank (trec_eval's order: score descending, ties by docno descending, byte-wise) is
  taken from the file order where the file already lists each topic in one block by descending score
  (most runs do): only the rows of tied scores are sorted, by docno. Other files are sorted whole;
* repeated (topic, docno) pairs are screened on integer codes (a dictionary of the file's docnos).

Anything unusual (a line the general reader would split or judge differently, a bad number, another
tag, a duplicate, an empty file, a file over :data:`MAX_BYTES`) makes :func:`read_run` return None:
the file then goes to the general reader (:mod:`evalstore.ingest.readers`), which gives the exact
error message or the same rows. So the two readers always agree (tests/evalstore/ingest/test_fast.py).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .ir_metadata import leading_comment_bytes

#: Files larger than this (decompressed, bytes) go to the general reader (which streams).
MAX_BYTES = 1 << 30
#: A file that may hold a line this long goes to the general reader, which knows DuckDB's limit
#: (max_line_size, 2 MB) and says so.
LONG_LINE = 1 << 20

_PRINTABLE = bytes(b for b in range(256) if b >= 0x21 and b != 0x7F)
#: Bytes allowed in a fast file besides printable ones: the delimiter and the line feed.
_GOOD = {"\t": _PRINTABLE + b"\t\n", " ": _PRINTABLE + b" \n"}
_BOM = b"\xef\xbb\xbf"
_NAMES = ["topic", "q0", "doc", "rank", "score", "tag"]
_CONVERT = pcsv.ConvertOptions(
    column_types={
        "topic": pa.string(),
        "q0": pa.string(),
        "doc": pa.string(),
        "rank": pa.string(),
        "score": pa.float64(),
        "tag": pa.string(),
    },
    null_values=[],
    true_values=[],
    false_values=[],
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)
_READ = pcsv.ReadOptions(column_names=_NAMES, use_threads=False, block_size=1 << 22)
_PARSE = {
    d: pcsv.ParseOptions(delimiter=d, quote_char=False, escape_char=False, double_quote=False, newlines_in_values=False)
    for d in ("\t", " ")
}


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


def file_bytes(path: Path, compression: str, want_sha: bool = False) -> tuple[bytes, str | None] | None:
    """The decompressed content of a file and (``want_sha``) the sha256 of the file as given, or
    None if it is damaged or larger than :data:`MAX_BYTES`."""
    try:
        if os.path.getsize(path) * (4 if compression == "gzip" else 1) > MAX_BYTES:
            return None
        with open(path, "rb") as f:
            raw = f.read()
        if compression != "gzip":
            return raw, None
        file_sha = hashlib.sha256(raw).hexdigest() if want_sha else None
        data = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return None
    return (data, file_sha) if len(data) <= MAX_BYTES else None


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
) -> FastRun | None:
    """The run file's rows, ranked, or None when the general reader must read it (see the module
    docstring). ``tag0``: the tag of its first line, which every line must carry. ``keep_docs``:
    keep only the rows of these docnos (those some qrels set judges), and count each topic's rows
    (:attr:`FastRun.counts`)."""
    if tag0 is None:
        return None
    read = file_bytes(path, compression, want_sha)
    if read is None:
        return None
    data, file_sha = read
    sha = hashlib.sha256(data).hexdigest() if want_sha else None
    skip = leading_comment_bytes(data)  # an ir_metadata header (evalstore.ingest.ir_metadata)
    if skip:
        data = data[skip:]
    if not clean(data, delim):
        return None
    try:
        t = pcsv.read_csv(pa.py_buffer(data), read_options=_READ, parse_options=_PARSE[delim], convert_options=_CONVERT)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a line with another number of fields, a bad score, bytes that are not UTF-8
    del data
    if t.num_rows == 0:
        return None
    return _ranked(t, tag0, sha, file_sha or sha, keep_docs)


def _ranked(
    t: pa.Table, tag0: str, sha: str | None, file_sha: str | None, keep_docs: pa.Array | None = None
) -> FastRun | None:
    tag = t.column("tag")
    if not pc.all(pc.equal(tag, tag0)).as_py():
        return None
    text = t.column("rank").combine_chunks()
    if not pc.all(pc.ascii_is_decimal(text)).as_py():
        return None  # a sign, or not an integer: the general reader decides
    try:
        submitted = pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    score = t.column("score").combine_chunks()
    if not pc.all(pc.is_finite(score)).as_py():
        return None
    topic = t.column("topic").combine_chunks()
    doc = t.column("doc").combine_chunks()
    n = len(topic)
    topics = pc.dictionary_encode(topic)
    tcode = topics.indices.to_numpy()
    n_topics = len(topics.dictionary)
    docs = pc.dictionary_encode(doc)
    # an empty field (a repeated or leading delimiter) or a comment line: the general reader decides
    if not (_nonempty(topics.dictionary) and _nonempty(docs.dictionary) and _nonempty(t.column("q0"))):
        return None
    if pc.any(pc.starts_with(topics.dictionary, "#")).as_py():
        return None
    if sum(pc.max(pc.binary_length(t.column(c))).as_py() for c in ("topic", "q0", "doc", "rank", "tag")) > LONG_LINE:
        return None
    if _has_duplicates(tcode, docs.indices.to_numpy(), len(docs.dictionary)):
        return None
    rank = evaluation_rank(tcode, n_topics, score.to_numpy(), doc)
    table = pa.table(
        {
            "topic": topic,
            "doc": doc,
            "submitted_rank": submitted,
            "score": score,
            "ln": pa.array(np.arange(1, n + 1, dtype=np.int64)),
            "rank": pa.array(rank),
        }
    )
    if keep_docs is None:
        return FastRun(table, sha, file_sha, n, n_topics)
    narrow, counts = narrowed(table, topics, docs, keep_docs)
    return FastRun(narrow, sha, file_sha, n, n_topics, counts)


def narrowed(
    table: pa.Table, topics: pa.DictionaryArray, docs: pa.DictionaryArray, keep_docs: pa.Array
) -> tuple[pa.Table, pa.Table]:
    """The rows of ``table`` whose docno is one of ``keep_docs`` (looked up once per distinct docno,
    not once per row), and each topic's count of rows (``topic, n``)."""
    kept = pc.is_in(docs.dictionary, value_set=keep_docs).to_numpy(zero_copy_only=False)[docs.indices.to_numpy()]
    n = np.bincount(topics.indices.to_numpy(), minlength=len(topics.dictionary))
    return table.filter(pa.array(kept)), pa.table({"topic": topics.dictionary, "n": pa.array(n)})


def ranked_rows(table: pa.Table, keep_docs: pa.Array | None) -> tuple[pa.Table, pa.Table | None]:
    """A run given in memory (``topic, doc, score, ln``) with its rank in trec_eval's order and,
    with ``keep_docs``, narrowed as the fast reader narrows a file's rows (and its counts)."""
    topics = pc.dictionary_encode(table.column("topic").combine_chunks())
    docs = pc.dictionary_encode(table.column("doc").combine_chunks())
    out = table
    if "rank" not in table.column_names:  # (a run read from a file comes ranked)
        score = table.column("score").combine_chunks()
        doc = docs.dictionary.take(docs.indices)
        out = table.append_column(
            "rank", pa.array(evaluation_rank(topics.indices.to_numpy(), len(topics.dictionary), score.to_numpy(), doc))
        )
    if keep_docs is None:
        return out, None
    return narrowed(out, topics, docs, keep_docs)


def _nonempty(strings: pa.Array | pa.ChunkedArray) -> bool:
    return len(strings) == 0 or pc.min(pc.binary_length(strings)).as_py() > 0


def _has_duplicates(tcode: np.ndarray, dcode: np.ndarray, n_docs: int) -> bool:
    """A (topic, docno) pair occurs twice (on the dictionary codes of both)."""
    key = tcode.astype(np.int64) * n_docs + dcode
    return len(pc.unique(pa.array(key))) != len(key)


def evaluation_rank(tcode: np.ndarray, n_topics: int, score: np.ndarray, doc: pa.Array) -> np.ndarray:
    """trec_eval's rank of each row (score descending, ties by docno descending, byte-wise), 1-based
    within its topic, in the rows' order. A file that lists each topic in one block by descending
    score needs no sort: only its tied rows are ordered by docno."""
    n = len(tcode)
    change = tcode[1:] != tcode[:-1]
    starts = np.flatnonzero(np.concatenate(([True], change)))
    same = ~change
    if len(starts) == n_topics and not (score[1:] > score[:-1])[same].any():
        block = np.cumsum(np.concatenate(([True], change))) - 1
        pos = np.arange(n, dtype=np.int64) - starts[block]
        rank = (pos + 1).astype(np.int32)
        tie = same & (score[1:] == score[:-1])
        if tie.any():
            tied = np.zeros(n, dtype=bool)
            tied[:-1] |= tie
            tied[1:] |= tie
            slots = np.flatnonzero(tied)
            first = np.ones(len(slots), dtype=bool)
            first[1:] = ~tie[slots[1:] - 1]
            group = np.cumsum(first)
            order = pc.sort_indices(
                pa.table({"g": group, "doc": doc.take(pa.array(slots))}),
                sort_keys=[("g", "ascending"), ("doc", "descending")],
            ).to_numpy()
            rank[slots[order]] = rank[slots]
        return rank
    # not in order: sort the whole file
    order = pc.sort_indices(
        pa.table({"t": tcode, "s": score, "doc": doc}),
        sort_keys=[("t", "ascending"), ("s", "descending"), ("doc", "descending")],
    ).to_numpy()
    ts = tcode[order]
    sorted_starts = np.concatenate(([True], ts[1:] != ts[:-1]))
    first_pos = np.flatnonzero(sorted_starts)
    block = np.cumsum(sorted_starts) - 1
    rank = np.empty(n, dtype=np.int32)
    rank[order] = (np.arange(n) - first_pos[block] + 1).astype(np.int32)
    return rank

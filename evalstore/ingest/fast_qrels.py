"""The fast qrels reader for evaluations without a store: a cleanly delimited TREC qrels file read
by Arrow in one pass.

A TREC qrels file whose first line is four fields separated by single tabs (or single spaces) is
parsed here, in bounded blocks of whole lines (:mod:`evalstore.ingest.blocks`), with the checks of
the store's ingest on what was read: the bytes hold no other whitespace, CR or control byte, every
line has four non-empty fields, no comment line, grades are plain integers (``-`` allowed, as
trec_eval reads negative grades) within INTEGER's range, and each (topic, docno) is judged once.
Anything else (or an empty file) returns None, and ingest's general reader reads the file
(:func:`evalstore.ingest.tables.read_qrels`), which gives the same rows or the exact error message.
It spares the one-shot evaluation the general reader's database: about 0.25 CPU-s a call.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .blocks import LineBlocks, Unreadable
from .fast import LONG_LINE, PARSE, clean, csv_options, has_duplicates, one_array, topic_blocks
from .files import first_content_line

_NAMES = ["topic", "iteration", "doc", "grade"]
_READ, _CONVERT = csv_options({n: pa.string() for n in _NAMES})
_INT32 = (-(2**31), 2**31 - 1)


def delimiter(first_line: str | None) -> str | None:
    """'\t' or ' ' when the line has exactly 4 fields separated by single tabs (or single spaces)."""
    if not first_line or first_line.startswith("#") or re.search(r"[\x00-\x08\x0b-\x1f\x7f]", first_line):
        return None
    for d, other in (("\t", " "), (" ", "\t")):
        parts = first_line.split(d)
        if other not in first_line and len(parts) == 4 and all(parts):
            return d
    return None


class Coded:
    """Qrels read (``table``: ``topic, doc, grade``) with their topics and docnos dictionary-encoded,
    each column hashed once whatever uses it (the reader's check of repeated pairs, the judged topics
    and docnos, the index of the numpy measures; a million topics: about 2 CPU-s): the reader's
    encodings, else made on first use."""

    def __init__(
        self, table: pa.Table, topics: pa.DictionaryArray | None = None, docs: pa.DictionaryArray | None = None
    ):
        self.table = table
        if topics is not None:
            self.topics = topics
        if docs is not None:
            self.docs = docs

    @cached_property
    def topics(self) -> pa.DictionaryArray:
        return pc.dictionary_encode(one_array(self.table.column("topic")))

    @cached_property
    def docs(self) -> pa.DictionaryArray:
        return pc.dictionary_encode(one_array(self.table.column("doc")))

    def coded_table(self) -> pa.Table:
        """``topic, doc, grade`` with the topics and docnos as dictionary arrays."""
        return pa.table({"topic": self.topics, "doc": self.docs, "grade": self.table.column("grade")})


def read_qrels(path: Path, compression: str) -> pa.Table | None:
    """``(topic, doc, grade)`` of a cleanly delimited TREC qrels file, or None when the store's ingest
    must read it (see the module docstring)."""
    read = read_coded(path, compression)
    return None if read is None else read.table


def read_coded(path: Path, compression: str) -> Coded | None:
    """:func:`read_qrels` with the topics and docnos as the reader encoded them (:class:`Coded`)."""
    delim = delimiter(first_content_line(path))
    if delim is None:
        return None
    tables = []
    try:
        for data in LineBlocks(path, compression, want_sha=False, max_line=LONG_LINE):
            if not clean(data, delim):
                return None
            buf = pa.py_buffer(data)
            tables.append(pcsv.read_csv(buf, read_options=_READ, parse_options=PARSE[delim], convert_options=_CONVERT))
    except (Unreadable, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not tables or sum(t.num_rows for t in tables) == 0:
        return None
    t = pa.concat_tables(tables)
    topic, doc = t.column("topic").combine_chunks(), t.column("doc").combine_chunks()
    text = t.column("grade").combine_chunks()
    for col in (topic, doc, t.column("iteration")):
        if pc.min(pc.binary_length(col)).as_py() == 0:
            return None  # an empty field: a repeated or leading delimiter
    if pc.any(pc.starts_with(topic, "#")).as_py() or not pc.all(pc.match_substring_regex(text, r"^-?[0-9]+$")).as_py():
        return None
    if pc.max(pc.binary_length(text)).as_py() > 11:
        return None
    grade = pc.cast(text, pa.int64())
    lo, hi = pc.min_max(grade).values()
    if lo.as_py() < _INT32[0] or hi.as_py() > _INT32[1]:
        return None
    topics, docs = topic_blocks(topic), pc.dictionary_encode(doc)
    if has_duplicates(topics.indices.to_numpy(), docs.indices.to_numpy(), len(docs.dictionary)):
        return None  # a document judged twice: the store's message says where
    return Coded(pa.table({"topic": topic, "doc": doc, "grade": pc.cast(grade, pa.int32())}), topics, docs)

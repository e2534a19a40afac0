"""The fast qrels reader (evalstore.ingest.fast_qrels), used by evaluations without a store: for
every file it reads, the rows the store's ingest stores; every file it declines goes to the store's
ingest, so the one-shot evaluation gives the store's result or its exact message."""

from __future__ import annotations

import gzip

import pyarrow.compute as pc
import pytest
from fuzz_corpus import cases

import evalstore
from evalstore.ingest.fast_qrels import Coded, read_coded, read_qrels
from evalstore.ingest.files import compression
from evalstore.ingest.tables import read_coded_qrels

GOOD = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\nq2 0 d3 -1\n\xc3\xa9 0 d\xc3\xa9 3\n"
VARIANTS = {
    "spaces": GOOD,
    "tabs": GOOD.replace(b" ", b"\t"),
    "blank_line": GOOD.replace(b"\nq2", b"\n\nq2", 1),
    "no_final_newline": GOOD[:-1],
    "iteration_text": GOOD.replace(b" 0 ", b" Q0 "),
    "plus_grade": GOOD.replace(b"d1 1", b"d1 +1"),
    "big_grade": GOOD.replace(b"d1 2", b"d1 99999999999"),
    "float_grade": GOOD.replace(b"d1 2", b"d1 2.0"),
    "crlf": GOOD.replace(b"\n", b"\r\n"),
    "double_space": GOOD.replace(b"q2 0", b"q2  0", 1),
    "mixed_ws": GOOD.replace(b"q2 0 d1", b"q2\t0\td1", 1),
    "comment": b"# judged by NIST\n" + GOOD,
    "bom": b"\xef\xbb\xbf" + GOOD,
    "duplicate": GOOD + b"q1 0 d1 2\n",
    "five_fields": GOOD.replace(b"d2 0", b"d2 0 x"),
    "empty": b"",
}


def _stored(path):
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(path), progress=False)
        return sorted(s.con.execute("SELECT topic, doc, grade FROM qrels_data").fetchall())


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("gz", [False, True])
def test_fast_qrels_reads_what_the_store_stores_or_declines(tmp_path, name, gz):
    data = VARIANTS[name]
    path = tmp_path / ("q.gz" if gz else "q.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    fast = read_qrels(path, compression(path))
    try:
        stored = _stored(path)
    except evalstore.EvalstoreError:
        assert fast is None, name
        return
    if fast is None:
        assert name not in ("spaces", "tabs", "blank_line", "no_final_newline", "iteration_text"), name
        return
    assert sorted(zip(*(fast.column(c).to_pylist() for c in ("topic", "doc", "grade")))) == stored


@pytest.mark.parametrize("case", [c for c in cases() if c[1] == "qrels"], ids=lambda c: c[0])
def test_one_shot_gives_the_store_message_for_every_malformed_qrels(tmp_path, case):
    name, _, data, expect = case
    qrels = tmp_path / f"{name}.qrels"
    qrels.write_bytes(data)
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\n")
    with pytest.raises(evalstore.EvalstoreError) as one_shot:
        evalstore.evaluate(str(qrels), [str(run)], ["AP"])
    with evalstore.open(":memory:") as s, pytest.raises(evalstore.EvalstoreError) as stored:
        s.ingest_qrels(str(qrels), progress=False)
        s.ingest_run(str(run), progress=False)
        s.evaluate("qrels", None, ["AP"], progress=False)
    assert str(one_shot.value) == str(stored.value)
    assert expect in str(one_shot.value).lower()


@pytest.mark.parametrize("lines", [["1 0 a 1", "1 0 b 0", "2 0 a 2"], ["2 0 b 1", "1 0 a 0", "2 0 a 1", "10 0 c 3"]])
def test_the_encodings_of_the_read_are_dictionary_encode_s(tmp_path, lines):
    """The reader hands on the topics and docnos it encoded (each hashed once, whatever uses them):
    the codes pyarrow's dictionary_encode gives, read by the fast reader or made on first use."""
    path = tmp_path / "q.txt"
    path.write_text("\n".join(lines) + "\n")
    read = read_coded(path, compression(path))
    via_tables = read_coded_qrels(str(path))
    made = Coded(read.table)
    for coded in (read, via_tables, made):
        for col, enc in (("topic", coded.topics), ("doc", coded.docs)):
            want = pc.dictionary_encode(coded.table.column(col).combine_chunks())
            assert enc.dictionary.equals(want.dictionary) and enc.indices.equals(want.indices)
        assert coded.coded_table().column("grade").equals(coded.table.column("grade"))
    assert read.table.equals(read_qrels(path, compression(path)))

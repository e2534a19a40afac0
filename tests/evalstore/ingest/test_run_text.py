"""What `export run` needs to give an ingested run file back byte for byte (evalstore.ingest.run_text):
the lines' format learnt and checked on every line, or the text itself kept when the lines differ
(issue 44.7). Every case exports the run and compares the bytes with the file's."""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import asdict

import pytest
from support import store_at_migration_1

import evalstore
from evalstore.ingest.run_text import LineFormat, learn

LINES = [("q1", "d1", 1, "10.606700"), ("q1", "d2", 2, "3.805300"), ("q2", "d3", 1, "1.000000")]


def _file(sep: str = "\t", eol: str = "\n", final: bool = True, rest: str = "", scores=None) -> bytes:
    scores = scores or [s for *_, s in LINES]
    lines = [sep.join([t, "Q0", d, str(r), s, "bm25"]) + rest for (t, d, r, _), s in zip(LINES, scores)]
    return (eol.join(lines) + (eol if final else "")).encode()


def _kept(s, name: str) -> tuple[str | None, int]:
    fmt = s.con.execute("SELECT line_format FROM run_meta WHERE name = ?", [name]).fetchall()[0][0]
    n = s.con.execute(
        "SELECT count(*) FROM run_text_data JOIN run_meta USING (run_id) WHERE name = ?", [name]
    ).fetchall()[0][0]
    return fmt, n


def _round_trip(tmp_path, content: bytes, suffix: str = ".run", **kwargs) -> tuple[bytes, tuple, object]:
    f = tmp_path / f"in{suffix}"
    f.write_bytes(gzip.compress(content) if suffix.endswith(".gz") else content)
    with evalstore.open(tmp_path / "s.duckdb") as s:
        [res] = s.ingest_run(f, progress=False, **kwargs)
        out = tmp_path / "out.run"
        exported = s.export_run(res.name, out)
        kept = _kept(s, res.name)
        assert s.sql("SELECT exact_text FROM runs WHERE name = ?", [res.name]).rows == [(True,)]
    return out.read_bytes(), kept, exported


@pytest.mark.parametrize(
    "content",
    [
        _file(),  # TREC DL 2019's bm25base_p: tabs, %.6f
        _file(sep=" ", scores=["10.6067", "3.8053", "1.0"]),  # spaces, the shortest text of each double
        _file(eol="\r\n"),
        _file(final=False),
        _file(rest="  extra fields\t"),  # fields after the tag, trailing blanks
        _file(sep="  ", scores=["-8.46631", "-9", "-11"]),  # Indri's %g: -9, not -9.0
        _file(scores=["1", "2", "3"]),  # integers
    ],
    ids=["tabs-f6", "spaces-shortest", "crlf", "no-final-eol", "rest", "indri-g", "integers"],
)
def test_one_shape_keeps_only_the_format(tmp_path, content):
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content
    assert fmt is not None and parts == 0  # a few bytes: no text kept
    assert exported.exact and exported.sha256 == hashlib.sha256(content).hexdigest()
    assert "byte for byte (its sha256 is runs.sha256)" in exported.summary()


def test_a_header_and_gzip(tmp_path):
    header = "# ir_metadata.start\n# tag: bm25\n# ir_metadata.end\n"
    content = header.encode() + _file()
    out, (fmt, parts), exported = _round_trip(tmp_path, content, ".run.gz")
    assert out == content and fmt is not None and parts == 0 and exported.header


@pytest.mark.parametrize(
    "content, how",
    [
        (_file() + b"q3\tQ0\td4\t1\t0.5\tbm25\n", "a score spelt otherwise after the sample"),
        (_file() + b"# a comment between lines\nq3\tQ0\td4\t1\t0.500000\tbm25\n", "a comment line"),
        (_file() + b"\nq3\tQ0\td4\t1\t0.500000\tbm25\n", "a blank line"),
        (_file(sep="\t") + b"q3 Q0 d4 1 0.500000 bm25\n", "other separators in a late line"),
        ("\ufeff".encode() + _file(), "a byte order mark"),
    ],
    ids=["late-score", "comment", "blank", "late-separators", "bom"],
)
def test_lines_of_several_shapes_keep_the_text(tmp_path, content, how, monkeypatch):
    from evalstore.ingest import run_text

    monkeypatch.setattr(run_text, "SAMPLE_LINES", 3)  # the sample sees the first lines only
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content, how
    assert fmt is None and parts == 1 and exported.exact


def test_dedupe_keeps_the_text_with_its_duplicates(tmp_path):
    content = _file() + b"q1\tQ0\td1\t3\t0.100000\tbm25\n"
    out, (fmt, parts), exported = _round_trip(tmp_path, content, dedupe=True)
    assert out == content and parts == 1 and exported.n_rows == 3


def test_large_text_in_several_parts(tmp_path, monkeypatch):
    from evalstore.ingest import run_text

    monkeypatch.setattr(run_text, "PART_BYTES", 50)
    content = _file() + b"q3\tQ0\td4\t1\t0.5\tbm25\n"
    out, (fmt, parts), _ = _round_trip(tmp_path, content)
    assert out == content and parts == -(-len(content) // 50)


def test_replacing_or_dropping_a_run_drops_what_was_kept(tmp_path):
    f = tmp_path / "bm25.run"
    f.write_bytes(_file() + b"q3\tQ0\td4\t1\t0.5\tbm25\n")
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_run(f, progress=False)
        assert _kept(s, "bm25")[1] == 1 or _kept(s, "bm25")[0] is not None
        f.write_bytes(_file(sep=" "))
        s.ingest_run(f, replace=True, progress=False)
        fmt, parts = _kept(s, "bm25")
        assert LineFormat.from_json(fmt).seps == (" ",) * 5 and parts == 0
        s.export_run("bm25", tmp_path / "out.run")
        assert (tmp_path / "out.run").read_bytes() == f.read_bytes()
        s.drop_runs(["bm25"])
        assert s.sql("SELECT count(*) FROM run_text_data").rows == [(0,)]


def test_what_is_not_the_ingested_text_says_so(tmp_path):
    f = tmp_path / "bm25.run"
    f.write_bytes(_file())
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_run(f, progress=False)
        s.ingest_run({"q1": {"d1": 2.0}}, name="from a dict")
        tagged = s.export_run("bm25", tmp_path / "t.run", tag="other")
        assert not tagged.exact and "--tag replaces the tag" in tagged.summary()
        assert (tmp_path / "t.run").read_bytes() == _file().replace(b"bm25", b"other")  # the format, another tag
        from_dict = s.export_run("from a dict", tmp_path / "d.run")
        assert not from_dict.exact and "the store keeps no text of this run" in from_dict.summary()
        # a run ingested before schema 17 (nothing kept): evalstore's own lines
        s.con.execute("UPDATE run_meta SET line_format = NULL WHERE name = 'bm25'")
        old = s.export_run("bm25", tmp_path / "o.run")
        assert not old.exact and (tmp_path / "o.run").read_text().splitlines()[0] == "q1 Q0 d1 1 10.6067 bm25"
        assert s.sql("SELECT name, exact_text FROM runs ORDER BY name").rows == [
            ("bm25", False),
            ("from a dict", False),
        ]


def test_learn_the_format_of_a_sample():
    [fmt] = learn([b"q1\tQ0\td1\t1\t10.606700\tbm25\n", b"q1\tQ0\td2\t2\t3.805300\tbm25\n"])
    assert fmt == LineFormat(("\t",) * 5, "Q0", "bm25", "", "\n", "%.6f", spelt_by="arrow")
    shortest, g = learn([b"q 0 d 1 -9.5 x\n", b"q 0 e 2 -8.25 x\n"])
    assert shortest.score is None and g.score == "%.3g" and shortest.q0 == "0"
    assert learn([b"q Q0 d 1 1.5 x\n", b"q Q0 e 2 1.5 y\n"]) == []  # two tags
    assert learn([b"q Q0 d 1 1.5 x\n", b"q Q0 e 2 1.5 x\r\n"]) == []  # two line ends
    assert learn([b"q Q0 d 1 1.5\n"]) == []  # five fields


def test_an_older_store_upgrades_and_says_its_runs_are_not_kept(tmp_path):
    path = tmp_path / "old.duckdb"
    store_at_migration_1(path)
    with evalstore.open(path) as s:
        assert s.sql("SELECT name, exact_text FROM runs").rows == [("old", False)]
        exported = s.export_run("old", tmp_path / "old.run")
        assert not exported.exact and "ingested before schema version 17" in exported.summary()
        assert (tmp_path / "old.run").read_text() == "q1 Q0 dA 1 2.0 old\nq1 Q0 dB 2 1.0 old\n"


@pytest.mark.parametrize(
    "content, suffix",
    [
        (_file(), ".run"),
        (_file(sep=" ", scores=["10.6067", "3.8053", "1.0"]), ".run"),
        (_file(final=False), ".run"),
        (_file(sep=" ", scores=["-8.46631", "-9", "-11"]), ".run"),
        (_file(scores=["1", "2", "3"]), ".run"),
        (b"# ir_metadata.start\n# tag: bm25\n# ir_metadata.end\n" + _file(), ".run.gz"),
    ],
    ids=["tabs-f6", "spaces-shortest", "no-final-eol", "indri-g", "integers", "header-gz"],
)
def test_the_fast_reader_checks_the_format_as_it_reads(tmp_path, content, suffix, monkeypatch):
    """A cleanly delimited file of one shape: its format is checked on the rows as they are read
    (the lines export makes hash to the file's), not by reading the stored run again."""
    from evalstore.ingest import runs

    def never(*args, **kwargs):
        raise AssertionError("the stored rows were read again")

    monkeypatch.setattr(runs, "keep_run_text", never)
    out, (fmt, parts), exported = _round_trip(tmp_path, content, suffix)
    assert out == content and fmt is not None and parts == 0 and exported.exact


def test_the_lines_checked_at_ingest_are_the_lines_export_makes(tmp_path):
    """:func:`part_lines` (the check at ingest, on Arrow rows) and :func:`lines_sql` (export of the
    formats spelt by DuckDB) make the same bytes for each kind of format, scores of every magnitude
    and sign; so do export and the check of a format spelt by Arrow (``spelt_by``)."""
    import duckdb
    import numpy as np
    import pyarrow as pa

    from evalstore.ingest.run_text import lines_sql, params, part_lines, text_bytes

    rng = np.random.default_rng(7)
    score = np.concatenate(
        [rng.normal(0, 10, 300), rng.normal(0, 1e9, 100), [0.0, -0.0, 1e-7, -2.5, 1e22, 3.0, 9.79e-05, 1e12]]
    )
    rows = pa.table(
        {
            "topic": [f"q{i % 7}" for i in range(len(score))],
            "doc": [f"d{i}" for i in range(len(score))],
            "submitted_rank": np.arange(len(score), dtype=np.int64),
            "score": score,
            "line_no": np.arange(1, len(score) + 1, dtype=np.int64),
            "rank": np.ones(len(score), dtype=np.int32),
        }
    )
    con = duckdb.connect()
    for fmt in [
        LineFormat(("\t",) * 5, "Q0", "bm25", "", "\n", "%.6f"),
        LineFormat((" ",) * 5, "0", "x", "", "\n", None),
        LineFormat((" ",) * 5, "Q0", "indri", "", "\n", "%.6g"),
        LineFormat(("\t",) * 5, "Q0", "x", "", "\n", None, spelt_by="arrow"),
        LineFormat(("\t",) * 5, "Q0", "x", "", "\n", "%.6f", spelt_by="arrow"),
        LineFormat(("\t",) * 5, "Q0", "x", "", "\n", "%.0f", spelt_by="arrow"),
    ]:
        sql_fmt = LineFormat(**{**asdict(fmt), "spelt_by": "duckdb"})  # (lines_sql: DuckDB's spelling)
        exported = con.sql(lines_sql("rows", sql_fmt), params=params(fmt, None)).to_arrow_table().column(0)
        assert text_bytes(part_lines(con, rows, fmt).combine_chunks()) == text_bytes(exported.combine_chunks())


@pytest.mark.parametrize("final", [True, False], ids=["final-eol", "no-final-eol"])
def test_the_check_as_read_spans_the_parts_of_a_file(tmp_path, final, monkeypatch):
    """A file read in several parts (blocks of whole topics): the lines of every part are hashed in
    turn, the last line's end held back until the next part (a file may end without one)."""
    from evalstore.ingest import blocks, runs

    monkeypatch.setattr(blocks, "BLOCK_BYTES", 64)
    monkeypatch.setattr(runs, "keep_run_text", lambda *a, **k: pytest.fail("the stored rows were read again"))
    lines = [f"q{t}\tQ0\td{d}\t{d + 1}\t{10 - d / 4:.6f}\tbm25" for t in range(5) for d in range(6)]
    content = ("\n".join(lines) + ("\n" if final else "")).encode()
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content and fmt is not None and parts == 0 and exported.exact
    assert LineFormat.from_json(fmt).final_eol is final


def test_arrow_spells_the_shortest_score_as_duckdb_does():
    """:func:`shortest_fields` (the check at ingest and export of formats learnt now) writes every
    double as DuckDB's ``CAST(score AS VARCHAR)`` (export of the formats kept before): whole numbers,
    tiny and huge magnitudes, signs, -0.0."""
    import duckdb
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalstore.ingest.run_text import shortest_fields

    rng = np.random.default_rng(11)
    special = [0.0, -0.0, 3.0, -9.0, 1e-4, -1e-4, 9.99e-5, 1e-7, 1e10, 9999999999.0, 1e15, 1e16, 1e22, 2.5e-300]
    score = np.concatenate(
        [
            special,
            10.0 ** np.arange(-12, 25),
            rng.uniform(-1, 1, 20_000) * 10.0 ** rng.integers(-12, 22, 20_000),
            np.round(rng.uniform(-1, 1, 5_000) * 10.0 ** rng.integers(0, 18, 5_000)),
        ]
    )
    con = duckdb.connect()
    made = pc.binary_join_element_wise(*shortest_fields(con, pa.array(score)), "")
    duck = con.from_arrow(pa.table({"score": score})).select("CAST(score AS VARCHAR)").to_arrow_table().column(0)
    assert made.to_pylist() == duck.to_pylist()
    assert shortest_fields(con, pa.array([0.5, 1.25]))[0].to_pylist() == ["0.5", "1.25"]  # no suffix input


@pytest.mark.parametrize(
    "content, how",
    [
        (_file(sep=" ", scores=["10.6067", "0.00001", "1.0"]), "Arrow's spelling of 1e-05 in the middle"),
        (_file(sep=" ", scores=["10.6067", "3.0", "1"]), "a whole number without .0"),
        (_file(sep=" ", scores=["10.6067", "3.8053", "1.0"]).replace(b"d2 2", b"d2\t2"), "a tab in one line"),
        (_file(sep=" ", eol="\r\n", scores=["10.6067", "3.8053", "1.0"]).replace(b"\r\nq2", b"\nq2"), "one LF"),
        (_file(sep=" ", scores=["10.6067", "3.8053", "1.0"]) + b"# a comment\n", "a comment line at the end"),
    ],
    ids=["odd-score", "whole-without-point", "tab", "mixed-eol", "comment"],
)
def test_a_shortest_file_that_differs_anywhere_keeps_its_text(tmp_path, content, how, monkeypatch):
    from evalstore.ingest import run_text

    monkeypatch.setattr(run_text, "SAMPLE_LINES", 1)  # the sample sees the first line only
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content, how
    assert fmt is None and parts == 1 and exported.exact, how


@pytest.mark.parametrize("eol, final", [("\n", True), ("\n", False), ("\r\n", True)], ids=["lf", "no-final", "crlf"])
def test_a_shortest_file_keeps_the_arrow_format(tmp_path, eol, final):
    """The common case (scores as their shortest text): the format is kept, spelt by Arrow at export
    (``spelt_by``), and the export is the file byte for byte, tiny and whole scores included."""
    scores = ["10.6067", "9.79e-05", "-3.0"]
    content = _file(sep="\t", eol=eol, final=final, scores=scores)
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content and parts == 0 and exported.exact
    kept = LineFormat.from_json(fmt)
    assert kept.score is None and kept.spelt_by == "arrow" and kept.arrow_made and kept.final_eol is final


def test_a_format_kept_before_spelt_by_exports_with_duckdb(tmp_path):
    """A format stored before the field (no ``spelt_by`` in its JSON) is DuckDB's, as it was checked."""
    content = _file(sep=" ", scores=["10.6067", "9.79e-05", "-3.0"])
    f = tmp_path / "bm25.run"
    f.write_bytes(content)
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_run(f, progress=False)
        fmt = LineFormat.from_json(_kept(s, "bm25")[0])
        old = {k: v for k, v in json.loads(fmt.to_json()).items() if k != "spelt_by"}
        assert LineFormat.from_json(json.dumps(old)).spelt_by == "duckdb"
        s.con.execute("UPDATE run_meta SET line_format = ? WHERE name = 'bm25'", [json.dumps(old)])
        assert s.export_run("bm25", tmp_path / "out.run").exact
    assert (tmp_path / "out.run").read_bytes() == content


def test_a_format_refuted_as_read_is_not_made_again(tmp_path, monkeypatch):
    """Indri's %g scores look like the shortest text in the first lines (``-9.5``) until a whole
    number (``-9``, not ``-9.0``): the check as read refutes the shortest spelling, and the check
    on the stored rows tries only the next format (``%.6g``), which it keeps."""
    from evalstore.ingest import run_text

    monkeypatch.setattr(run_text, "SAMPLE_LINES", 2)
    made = []
    real = run_text.run_file_chunks
    monkeypatch.setattr(run_text, "run_file_chunks", lambda *a, **k: made.append(a[4].score) or real(*a, **k))
    content = _file(sep="\t", scores=["-8.46631", "-9.5", "-9"])
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content and parts == 0 and exported.exact
    assert LineFormat.from_json(fmt).score == "%.6g" and made[0] == "%.6g"


def test_arrow_spells_fixed_decimals_as_duckdb_printf():
    """:func:`fixed_fields` (``%.Nf`` formats learnt now, N <= 9) writes every double as DuckDB's
    ``printf`` does: halves and near halves of the last decimal (DuckDB's own text there), -0.0,
    negatives that round to zero, huge and not-a-number scores."""
    import duckdb
    import numpy as np
    import pyarrow as pa

    from evalstore.ingest.run_text import fixed_fields

    rng = np.random.default_rng(5)
    special = [0.0, -0.0, 0.5, 1.5, 2.5, -1e-9, 5e-7, -5e-7, 1e300, float("nan"), 0.1234565, 2.675, 1.005]
    near_half = np.round(rng.uniform(-100, 100, 5_000), 6) + rng.choice([0, 5e-7, -5e-7], 5_000)
    score = np.concatenate([special, rng.normal(0, 10, 5_000), near_half, rng.uniform(-1, 1, 5_000) * 1e11])
    con = duckdb.connect()
    for n in (0, 1, 5, 6, 9):
        made = fixed_fields(con, pa.array(score), n)[0]
        duck = con.from_arrow(pa.table({"score": score})).select(f"printf('%.{n}f', score)").to_arrow_table()
        assert made.to_pylist() == duck.column(0).to_pylist(), n


_SPACED = _file(sep=" ", scores=["10.6067", "3.8053", "1.0"])


@pytest.mark.parametrize(
    "content, how",
    [
        (_SPACED[:-1].replace(b"\nq2", b"\n\nq2"), "a blank line and no final line feed: as many bytes"),
        (_SPACED.replace(b"d2 2", b"d2 02"), "a rank with a leading zero"),
        (_SPACED.replace(b"Q0 d3", b"q0 d3"), "another second field"),
        (_SPACED.replace(b"3.8053", b"3.80530"), "a score spelt otherwise"),
        (b"# a comment\n" + _SPACED, "a comment line before the lines (no ir_metadata header)"),
        (b"# ir_metadata.start\n# tag: bm25\n# ir_metadata.end\n# more\n" + _SPACED, "a comment after the header"),
        (_SPACED + b"\n", "a blank line at the end"),
    ],
    ids=["blank-no-final", "rank-zero", "q0", "score", "comment", "header-comment", "blank-end"],
)
def test_the_check_in_bulk_finds_any_line_export_would_not_make(tmp_path, content, how, monkeypatch):
    """The check as read compares each row's fields as written with what export writes, and counts
    the content's bytes and line feeds (no line made or hashed): a file that differs anywhere is kept
    as text, and export gives it back byte for byte."""
    from evalstore.ingest import run_text

    checked = []
    real = run_text._Counts.add
    monkeypatch.setattr(run_text._Counts, "add", lambda *a: checked.append(1) or real(*a))
    monkeypatch.setattr(run_text, "SAMPLE_LINES", 1)  # the sample sees the first line only
    out, (fmt, parts), exported = _round_trip(tmp_path, content)
    assert out == content, how
    assert checked and exported.exact, how
    assert parts == 1 or (fmt is not None and LineFormat.from_json(fmt).final_eol is not None), how


@pytest.mark.parametrize("suffix", [".run", ".run.gz"])
def test_the_check_in_bulk_keeps_the_format(tmp_path, suffix, monkeypatch):
    """A cleanly delimited file of one shape, with an ir_metadata header: checked in bulk, only its
    format kept."""
    from evalstore.ingest import run_text, runs

    checked = []
    real = run_text._Counts.add
    monkeypatch.setattr(run_text._Counts, "add", lambda *a: checked.append(1) or real(*a))
    monkeypatch.setattr(runs, "keep_run_text", lambda *a, **k: pytest.fail("the stored rows were read again"))
    content = b"# ir_metadata.start\n# tag: bm25\n# ir_metadata.end\n" + _SPACED
    out, (fmt, parts), exported = _round_trip(tmp_path, content, suffix)
    assert out == content and checked and fmt is not None and parts == 0 and exported.exact

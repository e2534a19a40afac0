"""ir_metadata run headers (evalstore.ingest.ir_metadata) and `export run` (evalstore.ingest.run_export):
the example headers of the ir_metadata repository (tests/fixtures/ir_metadata, SOURCE.md there)
survive ingest and export byte for byte; their JSON is what PyYAML and repro_eval read; a
malformed block is an error naming the file and line, and stores nothing; both readers read a
file with a header."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from support import FIXTURES, sha256_of

import evalstore
from evalstore.errors import IngestError
from evalstore.ingest import fast
from evalstore.ingest.ir_metadata import leading_comment_bytes, read_header, render

EXAMPLES = sorted((FIXTURES / "ir_metadata").glob("*.run"))
ROWS = "q1 Q0 d1 1 3.5 bm25\nq1 Q0 d2 2 2.5 bm25\nq2 Q0 d1 1 1.5 bm25\n"
HEADER = "# ir_metadata.start\n# tag: bm25\n# method:\n#   name: bm25\n#   k1: 0.9\n# ir_metadata.end\n"


def header_of(path: Path) -> bytes:
    data = path.read_bytes()
    end = data.index(b"# ir_metadata.end")
    return data[: data.index(b"\n", end) + 1]


def yaml_of(path: Path) -> dict:
    lines = header_of(path).decode().splitlines()[1:-1]
    return yaml.safe_load("\n".join(line[2:] if line.startswith("# ") else line[1:] for line in lines))


def test_the_examples_are_there():
    assert {p.stem for p in EXAMPLES} == {
        "platform", "research_goal", "implementation", "method", "actor", "data", "complete",
    }  # fmt: skip


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_header_survives_ingest_and_export(path, tmp_path):
    with evalstore.open(":memory:") as s:
        [res] = s.ingest_run(path, progress=False)
        meta = json.loads(s.sql("SELECT metadata FROM runs WHERE name = ?", [res.name]).rows[0][0])
        out = tmp_path / "out.run"
        exported = s.export_run(res.name, out)
    assert header_of(out) == header_of(path)
    assert out.read_bytes() == path.read_bytes()  # the rows too: scores written as they read back
    assert exported.sha256 == sha256_of(path) and exported.header and exported.n_rows == 3
    assert meta == yaml_of(path)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_repro_eval_reads_the_exported_header_as_evalstore_does(path, tmp_path):
    from repro_eval.metadata import MetadataHandler

    with evalstore.open(":memory:") as s:
        [res] = s.ingest_run(path, progress=False)
        meta = json.loads(s.sql("SELECT metadata FROM runs WHERE name = ?", [res.name]).rows[0][0])
        s.export_run(res.name, tmp_path / "out.run")
    assert json.loads(json.dumps(MetadataHandler.read_metadata(str(tmp_path / "out.run")))) == meta


def test_a_header_written_by_repro_eval(tmp_path):
    """repro_eval's MetadataHandler writes '# ' + line + ' ' (a trailing blank) for each line."""
    from repro_eval.metadata import MetadataHandler

    run = tmp_path / "plain.run"
    run.write_text(ROWS)
    template = tmp_path / "meta.yaml"
    template.write_text("tag: bm25\nmethod:\n  retrieval:\n  - name: bm25\n    b: 0.4\n    k1: 0.9\n")
    handler = MetadataHandler(run_path=str(run), metadata_path=str(template))
    handler.write_metadata(run_path=str(tmp_path / "annotated.run"))
    annotated = tmp_path / "annotated.run"
    with evalstore.open(":memory:") as s:
        s.ingest_run(annotated, progress=False)
        meta = json.loads(s.sql("SELECT metadata FROM runs").rows[0][0])
        s.export_run("bm25", tmp_path / "again.run")
    assert meta == {"tag": "bm25", "method": {"retrieval": [{"name": "bm25", "b": 0.4, "k1": 0.9}]}}
    assert header_of(tmp_path / "again.run") == header_of(annotated)
    assert MetadataHandler.read_metadata(str(tmp_path / "again.run")) == meta


def test_metadata_is_queryable(tmp_path):
    f = tmp_path / "bm25.run"
    f.write_text(HEADER + ROWS)
    g = tmp_path / "dense.run"
    g.write_text(ROWS.replace("bm25", "dense"))
    with evalstore.open(":memory:") as s:
        s.ingest_run([f, g], progress=False)
        assert s.sql("SELECT name FROM runs WHERE metadata->>'$.method.name' = 'bm25'").rows == [("bm25",)]
        assert s.sql("SELECT metadata->>'$.method.k1' FROM runs WHERE name = 'bm25'").rows == [("0.9",)]
        assert s.sql("SELECT metadata FROM runs WHERE name = 'dense'").rows == [(None,)]


def test_the_fast_reader_reads_a_file_with_a_header(tmp_path):
    plain, annotated = tmp_path / "plain.run", tmp_path / "annotated.run"
    plain.write_text(ROWS)
    annotated.write_text(HEADER + ROWS)
    a = fast.read_run(plain, "none", " ", "bm25")
    b = fast.read_run(annotated, "none", " ", "bm25")
    assert a is not None and b is not None, "the fast reader declined the file with a header"
    assert a.table.equals(b.table)
    assert b.sha == sha256_of(annotated) != a.sha  # the content hash covers the header
    assert leading_comment_bytes((HEADER + ROWS).encode()) == len(HEADER.encode())


def test_both_readers_store_the_same_run(tmp_path):
    """The fast reader (single blanks) and the general reader (mixed blanks) give the same rows and
    the same header."""
    fast_file, general_file = tmp_path / "a.run", tmp_path / "b.run"
    fast_file.write_text(HEADER + ROWS)
    general_file.write_text(HEADER + ROWS.replace(" Q0 ", "  Q0\t"))
    with evalstore.open(":memory:") as s:
        s.ingest_run(fast_file, name="fast", progress=False)
        s.ingest_run(general_file, name="general", progress=False)
        rows = {
            r: s.sql("SELECT topic, doc, rank, score FROM run_rows WHERE run = ? ORDER BY topic, rank", [r]).rows
            for r in ("fast", "general")
        }
        metas = s.sql("SELECT metadata FROM runs ORDER BY name").rows
    assert rows["fast"] == rows["general"] and len(rows["fast"]) == 3
    assert metas[0] == metas[1]


def test_gzip_and_crlf_headers_come_back_byte_for_byte(tmp_path):
    crlf = HEADER.replace("\n", "\r\n")
    f = tmp_path / "crlf.run.gz"
    f.write_bytes(gzip.compress((crlf + ROWS).encode()))
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, progress=False)
        assert json.loads(s.sql("SELECT metadata FROM runs").rows[0][0])["method"]["k1"] == 0.9
        s.export_run("bm25", tmp_path / "out.run.gz")
    assert gzip.decompress((tmp_path / "out.run.gz").read_bytes()).decode() == crlf + ROWS


def test_a_header_after_other_comments_and_blank_lines(tmp_path):
    f = tmp_path / "x.run"
    f.write_text("# produced by a script\n\n" + HEADER + "# a comment\n" + ROWS)
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, progress=False)
        assert s.con.execute("SELECT metadata_header FROM run_meta").fetchall() == [(HEADER,)]


@pytest.mark.parametrize(
    "text, line, says",
    [
        (HEADER.replace("# ir_metadata.end\n", "") + ROWS, 6, "is not closed before this line"),
        (HEADER.replace("# ir_metadata.end\n", ""), 1, "has no '# ir_metadata.end' line"),
        (HEADER.replace("#   k1: 0.9\n", "  k1: 0.9\n") + ROWS, 5, "is not closed before this line"),
        (HEADER.replace("#   k1: 0.9\n", "#   k1: [0.9\n") + ROWS, 5, "is not valid YAML"),
        (HEADER.replace("#   k1: 0.9\n", "#  k1: 0.9\n") + ROWS, 5, "is not valid YAML"),
        ("# ir_metadata.start\n# - a\n# - b\n# ir_metadata.end\n" + ROWS, 2, "not a mapping"),
        ("# ir_metadata.end\n" + ROWS, 1, "without a '# ir_metadata.start'"),
    ],
)
def test_a_malformed_block_names_the_file_and_line(tmp_path, text, line, says):
    f = tmp_path / "bad.run"
    f.write_text(text)
    with evalstore.open(":memory:") as s:
        with pytest.raises(IngestError) as e:
            s.ingest_run(f, progress=False)
        assert s.run_names() == []  # nothing stored
    assert e.value.file == "bad.run" or e.value.file.endswith("bad.run")
    assert e.value.line == line, str(e.value)
    assert says in str(e.value)


def _block(*lines: str) -> str:
    return "# ir_metadata.start\n" + "".join(f"# {line}\n" for line in lines) + "# ir_metadata.end\n" + ROWS


#: a "billion laughs" of 442 bytes: nine levels of nine aliases (9^9 strings once expanded)
LAUGHS = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")
]


@pytest.mark.parametrize(
    "text, line, says",
    [
        # issue 39.2: each of these ran out of memory or crashed ingest with exit 70
        (_block(*LAUGHS), 3, "expanded holds more than 1,048,576 characters"),
        (_block("a: &a [*a]"), 2, "the alias *a is inside the collection it names (a cycle)"),
        (_block("a: &a {b: [x, *a]}"), 2, "(a cycle)"),
        (_block("a: " + "[" * 50000), 2, "more than 64 levels deep"),
        (_block("tag: x", "a: " + "9" * 5000), 3, "a number has more than 100 digits"),
        (_block("tag: x", "a: " + "x" * (1 << 20)), 3, "is larger than 1,048,576 bytes"),
        (_block(*[f"k{i}: " + "y" * 1000 for i in range(1100)]), 1041, "is larger than 1,048,576 bytes"),
    ],
)
def test_a_header_beyond_its_bounds_is_refused_with_file_and_line(tmp_path, text, line, says):
    f = tmp_path / "hostile.run"
    f.write_text(text)
    with evalstore.open(":memory:") as s:
        with pytest.raises(IngestError) as e:
            s.ingest_run(f, progress=False)
        assert s.run_names() == []
    assert e.value.file.endswith("hostile.run") and e.value.line == line, str(e.value)
    assert says in str(e.value)


def test_aliases_within_the_bounds_are_expanded(tmp_path):
    f = tmp_path / "ok.run"
    f.write_text(_block("tag: x", "defaults: &d {k1: 0.9, b: 0.4}", "method: {retrieval: *d, rerank: *d}"))
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, name="ok", progress=False)
        meta = json.loads(s.con.execute("SELECT metadata FROM run_meta").fetchone()[0])
    assert meta["method"] == {"retrieval": {"k1": 0.9, "b": 0.4}, "rerank": {"k1": 0.9, "b": 0.4}}


def test_a_header_that_is_not_utf8(tmp_path):
    f = tmp_path / "latin.run"
    f.write_bytes(HEADER.replace("bm25\n#", "bm\xe925\n#", 1).encode("latin-1") + ROWS.encode())
    with evalstore.open(":memory:") as s, pytest.raises(IngestError, match="not UTF-8") as e:
        s.ingest_run(f, progress=False)
    assert e.value.line == 2


def test_yaml_values_become_json(tmp_path):
    f = tmp_path / "x.run"
    f.write_text(
        "# ir_metadata.start\n# tag: x\n# date: 2022-07-11\n# 1: one\n# ratio: .nan\n# ir_metadata.end\n"
        + ROWS.replace("bm25", "x")
    )
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, progress=False)
        meta = json.loads(s.sql("SELECT metadata FROM runs").rows[0][0])
    assert meta == {"tag": "x", "date": "2022-07-11", "1": "one", "ratio": "nan"}


def test_replacing_a_run_replaces_its_header(tmp_path):
    f, g = tmp_path / "a.run", tmp_path / "b.run"
    f.write_text(HEADER + ROWS)
    g.write_text(ROWS.replace("3.5", "4.5"))
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, progress=False)
        assert s.ingest_run(f, progress=False)[0].status == "unchanged"
        assert s.sql("SELECT metadata IS NOT NULL FROM runs").rows == [(True,)]
        s.ingest_run(g, name="bm25", replace=True, progress=False)
        assert s.con.execute("SELECT metadata, metadata_header FROM run_meta").fetchall() == [(None, None)]


def test_render_reads_back():
    data = {"tag": "f", "method": {"retrieval": [{"name": "rrf", "k": 60, "fuses": ["a", "b"]}]}}
    text = render(data)
    assert text.startswith("# ir_metadata.start\n") and text.endswith("# ir_metadata.end\n")
    header = read_header_text(text)
    assert header.data == data and header.text == text


def read_header_text(text: str):
    import io

    from evalstore.ingest.ir_metadata import scan

    return scan(io.BytesIO(text.encode()), "<text>")


# ----------------------------------------------------------------------------- export run
def test_export_without_header_and_tags(tmp_path):
    with evalstore.open(":memory:") as s:
        s.ingest_run({"q1": {"d1": 2.0, "d2": 1.0}}, name="my run")
        s.export_run("my run", tmp_path / "a.run")
        s.export_run("my run", tmp_path / "b.run", tag="T")
    assert (tmp_path / "a.run").read_text() == "q1 Q0 d1 1 2.0 my_run\nq1 Q0 d2 2 1.0 my_run\n"
    assert (tmp_path / "b.run").read_text().splitlines()[0].endswith(" T")


def test_export_keeps_the_file_order_and_submitted_ranks(tmp_path):
    f = tmp_path / "r.run"
    f.write_text("q2 Q0 b 5 1.0 t\nq2 Q0 a 7 2.0 t\nq1 Q0 c 1 0.5 t\n")
    with evalstore.open(":memory:") as s:
        s.ingest_run(f, progress=False)
        s.export_run("t", tmp_path / "out.run")
    assert (tmp_path / "out.run").read_text() == f.read_text()


def test_export_of_an_ntcir_run_keeps_its_order(tmp_path):
    """A res file has no scores: the export writes n - rank + 1, which trec_eval orders as the file."""
    res = tmp_path / "q1.res"
    res.write_text("dz\nda\ndm\n")
    with evalstore.open(":memory:") as s:
        s.ingest_run(res, name="nt", format="ntcir", progress=False)
        s.export_run("nt", tmp_path / "nt.run")
        s.ingest_run(tmp_path / "nt.run", name="again", progress=False)
        ranks = s.sql("SELECT run, doc, rank FROM run_rows ORDER BY run, rank").rows
    assert [(d, r) for run, d, r in ranks if run == "again"] == [(d, r) for run, d, r in ranks if run == "nt"]


def test_export_run_cli(sample_db, tmp_path, cli):
    out = tmp_path / "bm25.run"
    code, _, err = cli("export", "run", "bm25", "-o", out, "--db", sample_db)
    assert code == 0, err
    assert "wrote run 'bm25'" in err
    # the same run when read again (the scores' text is the shortest that reads back: 1.4 for 1.40)
    with evalstore.open(":memory:") as s:
        s.ingest_run(out, name="again", progress=False)
        again = s.sql("SELECT topic, doc, rank, score FROM run_rows ORDER BY topic, rank").rows
    with evalstore.open(sample_db, read_only=True) as s:
        stored = s.sql("SELECT topic, doc, rank, score FROM run_rows WHERE run = 'bm25' ORDER BY topic, rank").rows
    assert again == stored
    code, _, err = cli("export", "run", "nope", "-o", out, "--db", sample_db)
    assert code == 1 and "no run named 'nope'" in err
    code, out_text, _ = cli("export", "run", "bm25", "--db", sample_db)
    assert code == 0 and out_text.startswith("S01 Q0 ")


def test_read_header_of_a_file_without_one(tmp_path):
    f = tmp_path / "x.run"
    f.write_text(ROWS)
    assert read_header(f) is None

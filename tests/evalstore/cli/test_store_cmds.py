"""The store commands through the real entry point (evalstore.cli.main): ingest (good and bad
input), list, sql, db status/upgrade. Errors: exit code 1, a message naming file, line and
offending text, no traceback, and nothing stored."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from support import FIXTURES, holding_lock, run_cli, store_at_migration_1

import evalstore
from evalstore.db import available_migrations

FIX = FIXTURES / "ingest"


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "store.duckdb"
    with evalstore.open(path) as s:
        s.ingest_run(FIX / "run_small.txt", progress=False)
        s.ingest_qrels(FIX / "qrels_small.txt", progress=False)
    return path


@pytest.fixture
def db(tmp_path, template_db):
    """A store holding one run (sysA) and one qrels set (qrels_small)."""
    path = tmp_path / "store.duckdb"
    shutil.copyfile(template_db, path)
    return path


def snapshot(path: Path):
    """Everything an ingest could change: counts, names, sha256s, timestamps, a hash of the rows."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("""SELECT
            (SELECT list((name, sha256, n_rows, ingested_at) ORDER BY name) FROM run_meta),
            (SELECT list((name, sha256, n_judged, ingested_at) ORDER BY name) FROM qrels_meta),
            (SELECT count(*) FROM run_row_data),
            (SELECT sum(hash(run_id, topic, doc, rank, line_no, score)) FROM run_row_data),
            (SELECT count(*) FROM qrels_data), (SELECT sum(hash(qrels_id, topic, doc, grade)) FROM qrels_data)
        """).fetchall()
    finally:
        con.close()


GOOD_RUN = b"q1 Q0 a 1 1.0 t\n"

# (label, command, files {name: bytes}, extra args, expected pieces of the message)
BAD_INPUTS = [
    (
        "run: too few columns",
        "run",
        {"r.txt": b"q1 Q0 a 1 1.0 t\nq1 Q0 b 2 0.5\n"},
        [],
        ["line 2", "wrong number of columns (5 instead of at least 6)", "'q1 Q0 b 2 0.5'", "expected: at least 6"],
    ),
    (
        "run: non-numeric score",
        "run",
        {"r.txt": b"q1\tQ0\ta\t1\t1.0\tt\nq1\tQ0\tb\t2\thigh\tt\n"},
        [],
        ["line 2", "score 'high' (column 5) is not a finite number", "'q1\\tQ0\\tb\\t2\\thigh\\tt'"],
    ),
    ("run: score nan", "run", {"r.txt": b"q1 Q0 a 1 nan t\n"}, [], ["line 1", "score 'nan'", "'q1 Q0 a 1 nan t'"]),
    (
        "run: non-numeric rank",
        "run",
        {"r.txt": b"\n# header\nq1 Q0 a first 1.0 t\n"},
        [],
        ["line 3", "rank 'first' (column 4) is not an integer", "'q1 Q0 a first 1.0 t'"],
    ),
    (
        "run: several tags, no --name",
        "run",
        {"r.txt": b"q1 Q0 a 1 1.0 t1\nq1 Q0 b 2 0.5 t1\nq2 Q0 a 1 1.0 t2\n"},
        [],
        ["line 3", "several run tags (t1, t2)", "'q2 Q0 a 1 1.0 t2'", "--name NAME"],
    ),
    (
        "run: duplicate doc in a topic",
        "run",
        {"r.txt": b"q1 Q0 a 1 1.0 t\nq1 Q0 b 2 0.9 t\nq1 Q0 a 3 0.8 t\n"},
        [],
        ["line 3", "duplicate document 'a' in topic 'q1' (first seen on line 1)", "'q1 Q0 a 3 0.8 t'", "--dedupe"],
    ),
    (
        "run: undecodable bytes",
        "run",
        {"r.txt": b"q1 Q0 a 1 1.0 t\nq1 Q0 b\xe9 2 0.5 t\n"},
        [],
        ["line 2", "byte b'\\xe9' at column 8 is not UTF-8", "'q1 Q0 b\ufffd 2 0.5 t'", "iconv"],
    ),
    (
        "run: undecodable bytes in .gz",
        "run",
        {"r.txt.gz": gzip.compress(b"q1 Q0 a 1 1.0 t\r\n\r\nq1 Q0 \xff 2 0.5 t\r\n")},
        [],
        ["line 3", "is not UTF-8", "'q1 Q0 \ufffd 2 0.5 t'"],
    ),
    (
        "run: control character",
        "run",
        {"r.txt": b"q1 Q0 a 1 1.0 t\nq1 Q0 b\x01c 2 0.5 t\n"},
        [],
        ["line 2", "control character \\x01", "'q1 Q0 b\\x01c 2 0.5 t'"],
    ),
    ("run: empty file", "run", {"r.txt": b""}, [], ["empty file", "expected: at least 6"]),
    ("run: only comments and blank lines", "run", {"r.txt": b"# nothing\n\n   \n"}, [], ["empty file"]),
    ("run: file not found", "run", {}, ["missing.run"], ["missing.run: file not found"]),
    (
        "run: truncated gzip",
        "run",
        {"r.txt.gz": gzip.compress("".join(f"q1 Q0 d{i} {i} 1.0 t\n" for i in range(5000)).encode())[:3000]},
        [],
        ["gzip data is damaged or truncated", "gzip -t"],
    ),
    ("run: bzip2", "run", {"r.txt.bz2": bz2.compress(GOOD_RUN)}, [], ["bzip2-compressed", "bunzip2"]),
    (
        "run: second file of the call is bad",
        "run",
        {"a.txt": b"q1 Q0 a 1 1.0 ok1\n", "b.txt": b"q1 Q0 a 1 x ok2\n"},
        [],
        ["b.txt, line 1", "score 'x'"],
    ),
    (
        "run: new content under a stored name",
        "run",
        {"r.txt": b"q1 Q0 z 1 1.0 sysA\n"},
        [],
        ["a run named 'sysA' already exists with different content", "--replace"],
    ),
    (
        "res: two fields in a res file",
        "run",
        {"0001.res": b"d1\nd2 extra\n"},
        ["--format", "ntcir", "--name", "r"],
        ["line 2", "a res file has one docno per line", "'d2 extra'"],
    ),
    (
        "qrels: non-numeric grade",
        "qrels",
        {"q.txt": b"q1 0 a 1\nq1 0 b rel\n"},
        [],
        ["line 2", "grade 'rel' (column 4) is not an integer", "'q1 0 b rel'", "expected: 4 whitespace"],
    ),
    ("qrels: grade 1.5", "qrels", {"q.txt": b"q1 0 a 1.5\n"}, [], ["line 1", "grade '1.5'"]),
    (
        "qrels: wrong number of columns",
        "qrels",
        {"q.txt": b"q1 0 a 1\nq1 a 1\n"},
        [],
        ["line 2", "wrong number of columns (3 instead of 4)", "'q1 a 1'"],
    ),
    (
        "qrels: judged twice",
        "qrels",
        {"q.txt": b"q1 0 a 1\nq1 0 b 0\nq1 0 a 2\n"},
        [],
        ["line 3", "document 'a' is judged twice for topic 'q1' (first on line 1)", "'q1 0 a 2'"],
    ),
    ("qrels: empty file", "qrels", {"q.txt": b"\n\n"}, [], ["empty file: no judgments"]),
    (
        "qrels: NTCIR level without L",
        "qrels",
        {"q.txt": b"q1 a L1\nq1 b 2\n"},
        ["--format", "ntcir"],
        ["line 2", "relevance level '2' is not of the form L<n> (NTCIR levels need the L prefix: L2)", "'q1 b 2'"],
    ),
    (
        "qrels: NTCIR rel file level without L",
        "qrels",
        {"0001.rel": b"a L1\nb 1\n"},
        ["--format", "ntcir"],
        ["line 2", "relevance level '1'", "'b 1'", "expected: 2 whitespace"],
    ),
]


@pytest.mark.parametrize("label,kind,files,extra,expected", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_reported_and_nothing_is_stored(cli, db, tmp_path, label, kind, files, extra, expected):
    paths = []
    for name, content in files.items():
        p = tmp_path / name
        p.write_bytes(content)
        paths.append(p)
    before = snapshot(db)
    code, out, err = cli("ingest", kind, *paths, *extra, "--db", db)
    assert code == 1, err
    assert out == ""
    assert err.startswith("error: ") and "Traceback" not in err
    if paths:
        assert str(paths[-1] if "second file" in label else paths[0]) in err
    for piece in expected:
        assert piece in err, f"{piece!r} not in {err!r}"
    assert snapshot(db) == before


def test_locked_store_is_reported_plainly(cli, tmp_path):
    path = tmp_path / "locked.duckdb"
    assert cli("ingest", "run", FIX / "run_small.txt", "--db", path)[0] == 0
    with holding_lock(path) as pid:
        for args in (["ingest", "qrels", FIX / "qrels_small.txt"], ["list", "runs"], ["sql", "SELECT 1"]):
            code, out, err = cli(*args, "--db", path)
            assert code == 3 and out == ""  # 3: the store is busy
            writing = args[0] == "ingest"
            assert f"error: the store {path} is open {'in' if writing else 'for writing in'} another process" in err
            assert f"(PID {pid})" in err and "--wait SECONDS" in err
            assert "Traceback" not in err and "IO Error" not in err
        t = time.monotonic()
        code, out, err = cli("list", "runs", "--wait", "0.6", "--db", path)
        assert code == 3 and "(waited 0.6 s)" in err and time.monotonic() - t >= 0.6
    assert snapshot(path)[0][1] is None  # the qrels were not stored


def test_ingest_globs_reingest_replace_and_dedupe(cli, tmp_path):
    path = tmp_path / "s.duckdb"
    for i in range(3):
        (tmp_path / f"run{i}.txt.gz").write_bytes(
            gzip.compress(f"q1 Q0 a 1 {i}.5 sys{i}\nq1 Q0 b 2 0.1 sys{i}\n".encode())
        )
    code, out, err = cli("ingest", "run", str(tmp_path / "run*.txt.gz"), "--db", path)
    assert code == 0 and out == ""
    assert err.splitlines() == [f"run 'sys{i}' added: 2 rows, 1 topic" for i in range(3)]
    code, out, err = cli("ingest", "run", str(tmp_path / "run*.txt.gz"), "--db", path)
    assert (
        code == 0
        and err.count("identical content and options already stored under this name (same sha256), nothing to do") == 3
    )
    (tmp_path / "run1.txt.gz").write_bytes(gzip.compress(b"q1 Q0 c 1 9 sys1\nq1 Q0 c 2 8 sys1\n"))
    code, out, err = cli("ingest", "run", tmp_path / "run1.txt.gz", "--replace", "--db", path)
    assert code == 1 and "line 2: duplicate document 'c'" in err
    code, out, err = cli("ingest", "run", tmp_path / "run1.txt.gz", "--replace", "--dedupe", "--db", path)
    assert code == 0 and "run 'sys1' replaced: 1 row, 1 topic, 1 duplicate document line(s) dropped" in err
    code, out, _ = cli("sql", "SELECT run, doc, rank FROM run_rows ORDER BY run, rank", "-f", "csv", "--db", path)
    assert out == "run,doc,rank\nsys0,a,1\nsys0,b,2\nsys1,c,1\nsys2,a,1\nsys2,b,2\n"


def test_ingest_name_and_ntcir_formats(cli, tmp_path):
    path = tmp_path / "n.duckdb"
    code, _, err = cli(
        "ingest",
        "qrels",
        str(FIX / "ntcir_rel" / "*.rel"),
        "--format",
        "ntcir",
        "--name",
        "nq",
        "--gains",
        "1:2",
        "--db",
        path,
    )
    assert code == 0 and "qrels 'nq' added: 5 rows, 2 topics" in err
    code, _, err = cli("ingest", "run", str(FIX / "ntcir_res" / "*.res"), "-f", "ntcir", "-n", "nr", "--db", path)
    assert code == 0 and "run 'nr' added: 5 rows, 2 topics" in err
    code, _, err = cli("ingest", "run", FIX / "run_small.txt", "--name", "mine", "--db", path)
    assert code == 0 and "run 'mine' added" in err
    code, _, err = cli("ingest", "run", FIX / "run_small.txt", "--format", "xml", "--db", path)
    assert code == 2 and "'xml' is not one of trec, ntcir" in err


def test_list_and_sql_output_pipes_cleanly(cli, db):
    code, out, err = cli("list", "runs", "--db", db)
    assert (
        code == 0
        and "\x1b[" not in out
        and out.splitlines()[1].split()[:6] == ["name", "kind", "tag", "format", "n_topics", "n_rows"]
    )
    code, out, _ = cli("list", "qrels", "-f", "json", "--db", db)
    [q] = json.loads(out)
    assert (q["name"], q["n_judged"], q["max_grade"]) == ("qrels_small", 6, 2)
    query = "SELECT topic, doc, rank, score, score / 3 AS third FROM run_rows ORDER BY topic, rank"
    code, out, err = cli("sql", query, "--format", "csv", "--db", db)
    assert code == 0 and err == ""
    got = list(csv.reader(io.StringIO(out)))
    assert got[0] == ["topic", "doc", "rank", "score", "third"]
    assert got[2] == ["q1", "dC", "2", "2.0", repr(2.0 / 3)]  # full precision, no rounding
    code, out, _ = cli("sql", query, "-f", "json", "--db", db)
    recs = json.loads(out)
    assert recs[0] == {"topic": "q1", "doc": "dA", "rank": 1, "score": 3.5, "third": 3.5 / 3}
    assert len(recs) == 6
    code, out, _ = cli(
        "sql", "SELECT 1.25 AS d, [1, 2] AS l, {'a': 'x'} AS s, DATE '2024-01-02' AS day", "-f", "json", "--db", db
    )
    assert json.loads(out) == [{"d": 1.25, "l": [1, 2], "s": {"a": "x"}, "day": "2024-01-02"}]
    code, out, _ = cli(
        "sql", "SELECT doc, rank FROM run_rows WHERE topic = 'q2' ORDER BY rank", "-f", "tsv", "--db", db
    )
    assert out == "doc\trank\ndA\t1\ndE\t2\n"
    code, out, _ = cli("sql", "SELECT doc, score FROM run_rows WHERE topic = 'q2' ORDER BY rank", "--db", db)
    assert out == "doc  score\ndA   10.0\ndE   0.001\n"  # values as computed: no forced rounding


def test_sql_errors_and_write(cli, db):
    before = snapshot(db)
    code, out, err = cli("sql", "SELECT nope FROM runs", "--db", db)
    assert code == 1 and out == "" and err.startswith("error: SQL error: Binder Error") and "Traceback" not in err
    code, out, err = cli("sql", "DELETE FROM run_meta", "--db", db)
    assert code == 1 and "this statement is refused (DELETE)" in err and "--write" in err
    assert snapshot(db) == before
    code, out, err = cli("sql", "UPDATE run_meta SET tag = 'changed'", "--write", "-f", "csv", "--db", db)
    assert code == 0 and out == "Count\n1\n"  # DuckDB reports the number of rows changed
    assert cli("sql", "SELECT tag FROM runs", "-f", "csv", "--db", db)[1] == "tag\nchanged\n"
    code, out, err = cli("sql", "SELECT 1", "--db", db.parent / "absent.duckdb")
    assert code == 1 and "does not exist" in err and not (db.parent / "absent.duckdb").exists()


def test_db_location_from_url_and_environment(cli, db):
    assert cli("sql", "SELECT name FROM runs", "-f", "csv", "--db", f"duckdb:///{db}")[1] == "name\nsysA\n"
    env = {"EVALSTORE_DB": str(db)}
    assert cli("sql", "SELECT name FROM qrels_sets", "-f", "csv", env=env)[1] == "name\nqrels_small\n"


def test_db_status_and_upgrade(cli, tmp_path):
    path = tmp_path / "v1.duckdb"
    store_at_migration_1(path)
    newest = len(available_migrations())
    code, out, _ = cli("db", "status", "--db", path)
    assert code == 0 and f"schema version:  1 (this evalstore knows up to {newest})" in out
    assert "needs an upgrade: run `evalstore db upgrade`" in out
    code, _, err = cli("db", "upgrade", "--db", path)
    assert code == 0 and f"upgraded {path} from schema version 1 to {newest}" in err
    code, out, _ = cli("db", "status", "--db", path)
    assert f"schema version:  {newest} (this evalstore knows up to {newest})" in out and "up to date" in out
    assert "runs: 1   qrels sets: 1" in out
    st = json.loads(cli("db", "status", "-f", "json", "--db", path)[1])
    assert [a["version"] for a in st["applied"]] == list(range(1, newest + 1))
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')")
    con.close()
    code, out, _ = cli("db", "status", "--db", path)
    assert code == 0 and "written by a newer evalstore" in out
    code, out, err = cli("list", "runs", "--db", path)
    assert code == 1 and "has schema version 99" in err and "newer evalstore" in err
    code, out, _ = cli("db", "status", "--db", tmp_path / "none.duckdb")
    assert code == 0 and "does not exist" in out


def test_sql_column_names_as_written_and_name_suggestions(cli, db):
    code, out, _ = cli(
        "sql", "SELECT count(*), max(rank), round(avg(score), 2) AS m FROM run_rows", "-f", "csv", "--db", db
    )
    assert code == 0
    assert out.splitlines()[0] == "count(*),max(rank),m"
    code, _, err = cli("eval", "-q", "qrels_smal", "-m", "AP", "--db", db)
    assert code == 1 and "no qrels set named 'qrels_smal' in the store (did you mean 'qrels_small'?)" in err
    code, _, err = cli("eval", "-r", "sysa", "-m", "AP", "--db", db)
    assert code == 1 and "no run named 'sysa' in the store (did you mean 'sysA'?)" in err
    code, _, err = cli("eval", "-r", "zzz", "-m", "AP", "--db", db)
    assert code == 1 and "no run named 'zzz' in the store (runs: sysA)" in err


def test_sql_reads_the_query_from_standard_input(sample_db):
    """`evalstore sql -` failed with a syntax error at "-" (issue 44.10)."""
    r = run_cli("sql", "-", "-f", "csv", "--db", sample_db, stdin="SELECT count(*) AS n\nFROM runs\n")
    assert r.exit_code == 0 and r.stdout == "n\n6\n"
    r = run_cli("sql", "-", "--db", sample_db, stdin="  \n")
    assert r.exit_code == 2 and "standard input is empty" in r.output

"""Ingestion through the library: formats, tolerated variations, ranks, naming, re-ingest,
--replace atomicity, NTCIR layouts, dicts and the trec_eval conformance inputs."""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

import pytest
from support import DATA_DIR, FIXTURES, TREC_EVAL_DIR, need_shared

import evalstore
from evalstore.errors import IngestError

FIX = FIXTURES / "ingest"
SMALL_RUN = FIX / "run_small.txt"
SMALL_QRELS = FIX / "qrels_small.txt"


def rows(store, run):
    return store.sql(
        "SELECT topic, doc, rank, line_no, submitted_rank, score FROM run_rows WHERE run = ? ORDER BY topic, rank",
        [run],
    ).rows


def counts(store):
    return store.sql(
        "SELECT (SELECT count(*) FROM run_meta), (SELECT count(*) FROM run_row_data), "
        "(SELECT count(*) FROM qrels_meta), (SELECT count(*) FROM qrels_data)"
    ).rows[0]


def data_lines(path: Path) -> list[list[str]]:
    """Independent reading for the checks: fields of every non-blank, non-comment line."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline=None) as f:
        out = [ln.split() for ln in f]
    return [x for x in out if x and not x[0].startswith("#")]


# --------------------------------------------------------------------------- TREC runs
def test_small_run_ranks_line_numbers_and_metadata(store):
    [res] = store.ingest_run(SMALL_RUN, progress=False)
    assert (res.name, res.status, res.n_rows, res.n_topics) == ("sysA", "added", 6, 2)
    # rank: score desc, ties by docno desc (dC before dB); line_no: the n-th data line of the file.
    assert rows(store, "sysA") == [
        ("q1", "dA", 1, 1, 1, 3.5),
        ("q1", "dC", 2, 3, 3, 2.0),
        ("q1", "dB", 3, 2, 2, 2.0),
        ("q1", "dD", 4, 4, 4, -1.25),
        ("q2", "dA", 1, 5, 1, 10.0),
        ("q2", "dE", 2, 6, 2, 0.001),
    ]
    meta = store.sql("SELECT name, tag, source, sha256, n_topics, n_rows, format FROM runs").rows[0]
    assert meta == ("sysA", "sysA", str(SMALL_RUN), hashlib.sha256(SMALL_RUN.read_bytes()).hexdigest(), 2, 6, "trec")


def test_messy_whitespace_crlf_bom_blank_and_comment_lines_give_the_same_run(store, tmp_path):
    clean = [ln.split("\t") for ln in SMALL_RUN.read_text().splitlines() if not ln.startswith("#")]
    variants = {
        "spaces": "\n".join(" ".join(f) for f in clean) + "\n",
        "mixed": "\n".join("  " + " \t ".join(f) + " \t " for f in clean),  # padding, no final EOL
        "crlf": "\r\n".join("\t".join(f) for f in clean) + "\r\n",
        "blank_comments": "\n\n# comment\n" + "\n   \n".join("\t".join(f) for f in clean) + "\n  # indented\n\n",
        "bom": "\ufeff" + "\n".join(" ".join(f) for f in clean) + "\n",
    }
    expected = None
    for label, text in variants.items():
        p = tmp_path / f"{label}.run"
        p.write_bytes(text.encode("utf-8"))
        [res] = store.ingest_run(p, name=label, progress=False)
        got = [r[:3] + r[4:] for r in rows(store, label)]  # line_no differs with blank/comment lines
        assert res.n_rows == 6
        if expected is None:
            expected = got
        assert got == expected, label
    # line_no counts data lines only, so it is the same in every variant
    assert store.sql(
        "SELECT count(DISTINCT l), count(*) FROM (SELECT list(line_no ORDER BY topic, doc) AS l "
        "FROM run_rows GROUP BY run)"
    ).rows == [(1, len(variants))]


def test_extra_fields_after_the_tag_are_ignored_and_numbers_are_read_like_strtod(store, tmp_path):
    p = tmp_path / "x.run"
    p.write_text("t1 Q0 a 1 1e2 tagX some junk here\nt1 Q0 b 2 +.5 tagX\nt1 Q0 c 3 -0 tagX 1 2 3\nt1 Q0 d 04 7. tagX\n")
    store.ingest_run(p, progress=False)
    assert [(r[1], r[5], r[4]) for r in rows(store, "tagX")] == [
        ("a", 100.0, 1),
        ("d", 7.0, 4),
        ("b", 0.5, 2),
        ("c", 0.0, 3),
    ]


def test_gzip_is_read_transparently_whatever_the_file_name(store, tmp_path):
    data = SMALL_RUN.read_bytes()
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(data))
    (tmp_path / "b.run").write_bytes(gzip.compress(data.replace(b"sysA", b"sysB")))  # gzip without .gz
    res = store.ingest_run([tmp_path / "a.run.gz", tmp_path / "b.run"], progress=False)
    assert [(r.name, r.n_rows) for r in res] == [("sysA", 6), ("sysB", 6)]
    assert rows(store, "sysA") == rows(store, "sysB")


def test_globs_many_files_and_naming(store, tmp_path):
    for i in range(12):
        (tmp_path / f"r{i:02d}.txt").write_text(f"q1 Q0 d{i} 1 1.0 tag{i}\nq1 Q0 z 2 0.5 tag{i}\n")
    res = store.ingest_run(str(tmp_path / "r*.txt"), progress=False)
    assert [r.name for r in res] == [f"tag{i}" for i in range(12)]
    res = store.ingest_run([tmp_path / "r00.txt", tmp_path / "r01.txt"], name_from="file", progress=False)
    assert [r.name for r in res] == ["r00", "r01"]
    [res] = store.ingest_run(tmp_path / "r03.txt", name="custom", progress=False)
    assert res.name == "custom"
    assert store.sql("SELECT tag FROM runs WHERE name = 'custom'").rows == [("tag3",)]
    with pytest.raises(IngestError, match="--name names one run but 2 files"):
        store.ingest_run([tmp_path / "r00.txt", tmp_path / "r01.txt"], name="x", progress=False)


def test_two_files_with_the_same_tag_in_one_call(store, tmp_path):
    for i in range(2):
        (tmp_path / f"s{i}.txt").write_text(f"q1 Q0 d{i} 1 1.0 same\n")
    with pytest.raises(IngestError, match="would both be stored as the run 'same'"):
        store.ingest_run(str(tmp_path / "s*.txt"), progress=False)
    assert counts(store) == (0, 0, 0, 0)


def test_reingest_identical_is_a_noop_and_different_content_needs_replace(store, tmp_path):
    [r1] = store.ingest_run(SMALL_RUN, progress=False)
    before = store.sql("SELECT ingested_at, sha256 FROM runs").rows
    [r2] = store.ingest_run(SMALL_RUN, progress=False)
    assert r2.status == "unchanged" and "nothing to do" in r2.summary()
    assert store.sql("SELECT ingested_at, sha256 FROM runs").rows == before
    changed = tmp_path / "run.txt"
    changed.write_text(SMALL_RUN.read_text().replace("10\t", "0.5\t"))
    with pytest.raises(IngestError, match="already exists with different content") as e:
        store.ingest_run(changed, progress=False)
    assert "--replace" in str(e.value)
    assert rows(store, "sysA")[4][5] == 10.0
    # replacing drops the stored scores of the old content
    store.ingest_qrels(SMALL_QRELS, name="q", progress=False)
    store.evaluate("q", ["sysA"], ["AP"])
    assert store.sql("SELECT count(*) FROM scores").rows == [(2,)]
    [r3] = store.ingest_run(changed, replace=True, progress=False)
    assert r3.status == "replaced"
    assert store.sql("SELECT count(*) FROM scores").rows == [(0,)]
    assert [r[1] for r in rows(store, "sysA") if r[0] == "q2"] == ["dA", "dE"]
    assert store.sql("SELECT score FROM run_rows WHERE doc = 'dA' AND topic = 'q2'").rows == [(0.5,)]
    assert store.sql("SELECT count(*) FROM run_meta").rows == [(1,)]


def test_failed_replace_leaves_the_old_runs_intact(store, tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("q1 Q0 d1 1 2.0 runA\nq1 Q0 d2 2 1.0 runA\n")
    b.write_text("q1 Q0 d1 1 2.0 runB\n")
    store.ingest_run([a, b], progress=False)
    before = store.sql("SELECT * FROM run_rows ORDER BY run, topic, rank").rows
    meta = store.sql("SELECT name, sha256, n_rows, ingested_at FROM runs ORDER BY name").rows
    a.write_text("q1 Q0 d9 1 5.0 runA\n")  # new, valid content for runA
    b.write_text("q1 Q0 d1 1 2.0 runB\nq1 Q0 d3 2 oops runB\n")  # the second file of the call is bad
    with pytest.raises(IngestError, match="line 2: score 'oops'"):
        store.ingest_run([a, b], replace=True, progress=False)
    assert store.sql("SELECT * FROM run_rows ORDER BY run, topic, rank").rows == before
    assert store.sql("SELECT name, sha256, n_rows, ingested_at FROM runs ORDER BY name").rows == meta


def test_dedupe_keeps_the_first_occurrence(store, tmp_path):
    p = tmp_path / "dup.run"
    p.write_text("t Q0 a 1 1.0 d\nt Q0 b 2 0.9 d\nt Q0 a 3 0.95 d\nu Q0 a 1 1.0 d\nt Q0 b 4 0.1 d\n")
    with pytest.raises(IngestError, match=r"line 3: duplicate document 'a' in topic 't' \(first seen on line 1\)"):
        store.ingest_run(p, progress=False)
    [res] = store.ingest_run(p, dedupe=True, progress=False)
    assert res.n_dropped_duplicates == 2 and "2 duplicate document line(s) dropped" in res.summary()
    assert [(r[0], r[1], r[5]) for r in rows(store, "d")] == [("t", "a", 1.0), ("t", "b", 0.9), ("u", "a", 1.0)]
    assert store.sql("SELECT n_rows, n_dropped_duplicates FROM runs").rows == [(3, 2)]


# --------------------------------------------------------------------------- qrels
def test_trec_qrels_keep_zero_and_negative_grades(store):
    [res] = store.ingest_qrels(SMALL_QRELS, progress=False)
    assert (res.name, res.n_rows, res.n_topics) == ("qrels_small", 6, 2)
    assert store.sql("SELECT topic, doc, grade FROM qrels ORDER BY topic, doc").rows == [
        ("q1", "dA", 2),
        ("q1", "dB", 0),
        ("q1", "dC", 1),
        ("q1", "dX", -1),
        ("q2", "dE", 1),
        ("q2", "dY", 0),
    ]
    assert store.sql("SELECT n_topics, n_judged, max_grade FROM qrels_sets").rows == [(2, 6, 2)]


def test_qrels_naming_several_files_one_set_and_gains(store, tmp_path):
    a, b = tmp_path / "part1.txt", tmp_path / "part2.txt"
    a.write_text("q1 0 d1 1\n")
    b.write_text("q2 0 d2 2\n")
    assert [r.name for r in store.ingest_qrels([a, b], progress=False)] == ["part1", "part2"]
    [res] = store.ingest_qrels([a, b], name="both", gains="1:3", progress=False)
    assert (res.n_rows, res.n_topics) == (2, 2)
    assert store.sql("SELECT default_gains FROM qrels_sets WHERE name = 'both'").rows == [("1:3",)]
    b.write_text("q1 0 d1 0\n")
    with pytest.raises(IngestError, match=r"judged twice for topic 'q1' \(first on line 1 of .*part1.txt\)"):
        store.ingest_qrels([a, b], name="clash", progress=False)
    with pytest.raises(IngestError, match="non-decreasing"):
        store.ingest_qrels(a, name="g", gains="3:1", progress=False)


def test_replacing_qrels_that_have_subsamples_is_refused(store, tmp_path):
    from evalstore.subsample import create_subsamples

    p = tmp_path / "q.txt"
    p.write_text("".join(f"t{t} 0 d{i} {i % 2}\n" for t in range(3) for i in range(10)))
    store.ingest_qrels(p, name="q", progress=False)
    create_subsamples(store, "q", fractions=[0.5], trials=1)
    p.write_text("t0 0 d1 1\n")
    with pytest.raises(IngestError, match="subsample.*drawn from the qrels set 'q'"):
        store.ingest_qrels(p, name="q", replace=True, progress=False)


# --------------------------------------------------------------------------- NTCIR
def test_ntcir_qrels_rel_files_and_res_files(store):
    [q] = store.ingest_qrels(FIX / "qrels_ntcir.txt", name="nq", format="ntcir", progress=False)
    [r] = store.ingest_qrels(sorted((FIX / "ntcir_rel").glob("*.rel")), name="nrel", format="ntcir", progress=False)
    assert (q.n_rows, q.n_topics, r.n_rows, r.n_topics) == (5, 2, 5, 2)
    assert (
        store.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = 'nq' ORDER BY ALL").rows
        == store.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = 'nrel' ORDER BY ALL").rows
    )
    [res] = store.ingest_run(str(FIX / "ntcir_res" / "*.res"), name="nres", format="ntcir", progress=False)
    assert (res.n_rows, res.n_topics) == (5, 2)
    # NTCIREVAL order: the file order (no scores); rank = line_no within the per-topic file
    assert [r[:4] for r in rows(store, "nres")] == [
        ("q1", "dC", 1, 1),
        ("q1", "dA", 2, 2),
        ("q1", "dZ", 3, 3),
        ("q2", "dE", 1, 1),
        ("q2", "dA", 2, 2),
    ]
    assert store.sql("SELECT format, tag FROM runs").rows == [("ntcir", None)]


def test_ntcir_res_files_need_a_name_may_be_empty_and_trec_layout_works(store, tmp_path):
    (tmp_path / "0001.res").write_text("d1\nd2\n")
    (tmp_path / "0002.res").write_text("")
    with pytest.raises(IngestError, match="form one run: give it a name"):
        store.ingest_run(sorted(tmp_path.glob("*.res")), format="ntcir", progress=False)
    [res] = store.ingest_run(sorted(tmp_path.glob("*.res")), name="r", format="ntcir", progress=False)
    assert res.n_rows == 2 and "empty res file(s) (no documents for topic(s) 0002)" in res.summary()
    [t] = store.ingest_run(SMALL_RUN, format="ntcir", progress=False)
    assert rows(store, "sysA") == rows(store, t.name) and t.n_rows == 6
    assert store.sql("SELECT format FROM runs WHERE name = 'sysA'").rows == [("ntcir",)]


# --------------------------------------------------------------------------- dicts
def test_dicts_are_stored_like_files(store):
    from evalstore.ingest import qrels_from_dict, run_from_dict

    r = run_from_dict(store, "d", {"q1": {"dA": 3.5, "dB": 2.0, "dC": 2.0, "dD": -1.25}, "q2": {"dA": 10, "dE": 1e-3}})
    assert (r.n_rows, r.n_topics) == (6, 2)
    store.ingest_run(SMALL_RUN, progress=False)
    assert [x[:3] for x in rows(store, "d")] == [x[:3] for x in rows(store, "sysA")]
    assert (
        run_from_dict(
            store, "d", {"q1": {"dA": 3.5, "dB": 2.0, "dC": 2.0, "dD": -1.25}, "q2": {"dA": 10, "dE": 1e-3}}
        ).status
        == "unchanged"
    )
    q = qrels_from_dict(store, "dq", {"q1": {"dA": 2, "dX": -1}})
    assert (q.n_rows, q.n_topics) == (2, 1)
    assert (
        store.sql(
            "SELECT source, format FROM qrels_sets UNION ALL SELECT source, format FROM runs WHERE name = 'd'"
        ).rows
        == [("<dict>", "dict")] * 2
    )
    with pytest.raises(IngestError, match="not finite"):
        run_from_dict(store, "bad", {"q": {"d": float("nan")}})


# --------------------------------------------------------------------------- trec_eval conformance inputs
@pytest.mark.shared
def test_trec_eval_conformance_inputs(store):
    d = need_shared(TREC_EVAL_DIR)
    qrels = ["qrels.test", "qrels.rel_level", "qrels.comment.test", "qrels.test.with-comments", "synthetic/edge.qrels"]
    res = store.ingest_qrels([d / q for q in qrels], progress=False)
    got = {r.name: (r.n_rows, r.n_topics) for r in res}
    assert got["qrels.test"] == (3681, 3) and got["qrels.rel_level"] == (3681, 3)
    assert got["qrels.test.with-comments"] == got["qrels.test"]
    assert got["qrels.comment.test"][1] == 31 and got["edge"] == (13, 3)
    for q in qrels:
        lines = data_lines(d / q)
        assert got[res[qrels.index(q)].name][0] == len(lines)
    assert store.sql(
        "SELECT count(*) FROM qrels WHERE qrels = 'qrels.rel_level' AND grade = -1 AND topic = '303'"
    ).rows == [(304,)]
    # '#' inside docnos is data, not a comment
    assert store.sql("SELECT count(*) FROM qrels WHERE qrels = 'qrels.comment.test' AND doc LIKE '%#%'").rows[0][0] > 0

    runs = ["results.test", "results.trunc", "results.comment.test.gz", "synthetic/edge.run"]
    res = store.ingest_run([d / r for r in runs], name_from="file", progress=False)
    got = {r.name: (r.n_rows, r.n_topics) for r in res}
    assert got == {
        "results.test": (1500, 3),
        "results.trunc": (584, 2),
        "results.comment.test": (30100, 301),
        "edge": (12, 3),
    }
    assert store.sql("SELECT tag FROM runs ORDER BY name").rows == [
        ("edgeA,edgeB",),
        ("comment.test",),
        ("STANDARD",),
        ("STANDARD",),
    ]
    # trec_eval's ranking of T1 (README: relstring_20 = 0121-3.00): d9, d3, d1, D10, u1, d4, d6, d2, d5
    assert [r[1] for r in rows(store, "edge") if r[0] == "T1"] == [
        "d9",
        "d3",
        "d1",
        "D10",
        "u1",
        "d4",
        "d6",
        "d2",
        "d5",
    ]
    # every stored row is the file's line: same docno at the same data-line position
    for r in runs:
        lines = data_lines(d / r)
        name = res[runs.index(r)].name
        stored = store.sql("SELECT line_no, doc, score FROM run_rows WHERE run = ? ORDER BY line_no", [name]).rows
        assert [(i + 1, f[2], float(f[4])) for i, f in enumerate(lines)] == stored
    # the edge_dup run is refused, and accepted with dedupe
    with pytest.raises(IngestError, match="duplicate document 'd1' in topic 'T1'"):
        store.ingest_run(d / "synthetic" / "edge_dup.run", progress=False)
    [dup] = store.ingest_run(d / "synthetic" / "edge_dup.run", dedupe=True, progress=False)
    assert (dup.name, dup.n_rows, dup.n_dropped_duplicates) == ("dupA", 2, 1)


@pytest.mark.slow
@pytest.mark.shared
def test_all_dl2019_runs(store):
    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    files = sorted((d / "runs").glob("*.gz"))
    assert len(files) == 37
    res = store.ingest_run(files, progress=False)
    assert len({r.name for r in res}) == 37 and all(r.status == "added" for r in res)
    [q] = store.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
    assert q.n_topics == 43
    # the stored rows equal the files' lines (file order), for a few runs read independently
    for f in files[::12]:
        lines = data_lines(f)
        name = lines[0][5]
        stored = store.sql("SELECT topic, doc, line_no FROM run_rows WHERE run = ? ORDER BY line_no", [name]).rows
        assert stored == [(x[0], x[2], i + 1) for i, x in enumerate(lines)]
    # ranks are 1..n per topic and follow (score desc, docno desc)
    bad = store.sql("""SELECT count(*) FROM (
        SELECT rank, row_number() OVER (PARTITION BY run, topic ORDER BY score DESC, doc DESC) AS expect
        FROM run_rows) WHERE rank <> expect""").rows
    assert bad == [(0,)]
    assert sum(r.n_rows for r in res) == store.sql("SELECT count(*) FROM run_rows").rows[0][0]
    # idempotent: the whole directory again is a no-op
    again = store.ingest_run(files, progress=False)
    assert {r.status for r in again} == {"unchanged"}


@pytest.mark.slow
def test_file_order_survives_a_parallel_scan_of_a_large_uncompressed_file(store, tmp_path):
    """A file larger than DuckDB's CSV buffer is read by several threads; line_no must still be the
    file order (each line carries its own number in the rank column)."""
    p = tmp_path / "big.run"
    n = 1_000_000
    with open(p, "w") as f:
        f.writelines(f"{i // 1000} Q0 doc{(i * 7919) % n:08d} {i + 1} {(i * 31) % 997}.5 big\n" for i in range(n))
    assert p.stat().st_size > 32 * 2**20
    [res] = store.ingest_run(p, progress=False)
    assert res.n_rows == n
    assert store.sql("SELECT count(*) FROM run_rows WHERE line_no <> submitted_rank").rows == [(0,)]


def test_progress_bar_only_on_a_terminal(store, capsys, monkeypatch):
    store.ingest_run(SMALL_RUN, progress=None)  # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")
    store.ingest_run(SMALL_RUN, name="other", progress=None)
    err = capsys.readouterr().err
    assert "runs" in err and "\x1b[" in err  # drawn (and erased: the bar is transient)


# --------------------------------------------------------------------------- fast and general readers
CLEAN_LINES = [
    "q1\tQ0\tdA\t1\t3.5\tsysA",
    "q1\tQ0\tdB\t2\t2.0\tsysA",
    "q1\tQ0\tdC\t3\t2.0\tsysA",
    "q2\tQ0\tdA\t1\t10\tsysA",
    "q2\tQ0\tdE\t2\t1e-3\tsysA",
]
# Each variant starts with clean lines (so the fast reader is tried) and has one odd line later.
READER_VARIANTS = {
    "clean tabs": CLEAN_LINES,
    "clean spaces": [ln.replace("\t", " ") for ln in CLEAN_LINES],
    "space inside a field": CLEAN_LINES[:3] + ["q2\tQ0\td A\t1\t10\tsysA"],
    "tab in a space file": [ln.replace("\t", " ") for ln in CLEAN_LINES[:3]] + ["q2 Q0\tdA 1 10 sysA"],
    "double tab": CLEAN_LINES[:3] + ["q2\tQ0\t\tdA\t1\t10\tsysA"],
    "empty field": CLEAN_LINES[:3] + ["q2\tQ0\t\t1\t10\tsysA"],
    "seventh field": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t10\tsysA\tjunk"],
    "trailing tab": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t10\tsysA\t"],
    "trailing space": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t10\tsysA  "],
    "comment and blank lines": CLEAN_LINES[:2] + ["# note", "", "  "] + CLEAN_LINES[2:],
    "control character": CLEAN_LINES[:3] + ["q2\tQ0\td\x01A\t1\t10\tsysA"],
    "score with underscore": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t1_0\tsysA"],
    "hex score": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t0x10\tsysA"],
    "rank 1.0": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1.0\t10\tsysA"],
    "inf score": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\tinf\tsysA"],
    "topic starting with #": CLEAN_LINES[:3] + ["#q2\tQ0\tdA\t1\t10\tsysA"],
    "second tag": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t10\tsysB"],
    "tag with a space": CLEAN_LINES[:3] + ["q2\tQ0\tdA\t1\t10\tsys A"],
    "another Q0 column": CLEAN_LINES[:3] + ["q2\t0\tdA\t1\t10\tsysA"],
    "space inside the Q0 column": CLEAN_LINES[:3] + ["q2\tQ 0\tdA\t1\t10\tsysA"],
    "tab inside the Q0 column of a space file": (
        [ln.replace("\t", " ") for ln in CLEAN_LINES[:3]] + ["q2 X\tY dA 1 10 sysA"]
    ),
    "duplicate": CLEAN_LINES + ["q1\tQ0\tdA\t9\t0.1\tsysA"],
    "crlf": None,  # CLEAN_LINES with CRLF line ends
    "mixed line ends": None,
}


def _variant_bytes(label):
    if label == "crlf":
        return ("\r\n".join(CLEAN_LINES) + "\r\n").encode()
    if label == "mixed line ends":
        return ("\n".join(CLEAN_LINES[:2]) + "\r\n" + "\n".join(CLEAN_LINES[2:]) + "\n").encode()
    return ("\n".join(READER_VARIANTS[label]) + "\n").encode()


def _ingest_outcome(path):
    with evalstore.open(":memory:") as s:
        try:
            res = s.ingest_run(path, progress=False)
        except IngestError as e:
            return ("error", str(e))
        return (
            "ok",
            [(r.name, r.n_rows, r.status) for r in res],
            s.sql("SELECT run, topic, doc, rank, line_no, submitted_rank, score FROM run_rows ORDER BY ALL").rows,
            s.sql("SELECT name, tag, n_topics, n_rows FROM runs").rows,
        )


@pytest.mark.parametrize("label", list(READER_VARIANTS))
def test_fast_and_general_readers_store_the_same(label, tmp_path, monkeypatch):
    """Whatever the fast reader accepts, the general reader reads identically; whatever it cannot
    read exactly goes to the general reader. So the outcome (rows or error message) never depends
    on which reader was tried first."""
    from evalstore.ingest import files as ing_files
    from evalstore.ingest import readers as ing

    p = tmp_path / "v.run"
    p.write_bytes(_variant_bytes(label))
    assert ing.fast_delimiter(ing_files.first_content_line(p)) in ("\t", " ")  # the fast reader is tried
    fast = _ingest_outcome(p)
    monkeypatch.setattr(ing, "fast_delimiter", lambda first: None)  # general reader only
    general = _ingest_outcome(p)
    assert fast == general


def test_file_names_with_glob_characters_are_read_literally(store, tmp_path):
    # DuckDB's reader treats * ? [ as glob characters: 'run[1].txt' must not read 'run1.txt'.
    (tmp_path / "run[1].txt").write_text("q1 Q0 literal 1 1.0 lit\n")
    (tmp_path / "run1.txt").write_text("q1 Q0 other 1 1.0 other\n")
    (tmp_path / "a*b?.txt").write_text("q1\tQ0\tstar\t1\t1.0\tstar\n")
    (tmp_path / "axxbz.txt").write_text("q1\tQ0\twrong\t1\t1.0\twrong\n")
    res = store.ingest_run([tmp_path / "run[1].txt", tmp_path / "a*b?.txt"], progress=False)
    assert [r.name for r in res] == ["lit", "star"]
    assert store.sql("SELECT doc FROM run_rows ORDER BY doc").rows == [("literal",), ("star",)]
    (tmp_path / "q[x].txt").write_text("q1 0 d 1\nq1 0 d 1\n")
    with pytest.raises(IngestError, match=r"q\[x\]\.txt, line 2: document 'd' is judged twice"):
        store.ingest_qrels(tmp_path / "q[x].txt", progress=False)


def test_fast_reader_reading_many_files_at_once_stores_what_the_general_reader_stores(tmp_path, monkeypatch):
    """Cleanly delimited files are read by the fast reader, a few at once on two threads; line_no is
    each row's content line. Mix every variant the readers accept (blank and comment lines, odd
    lines sending a file back to the general reader), gzip, both delimiters and a glob-like file
    name in one call: same rows as the general reader alone."""
    from evalstore.ingest import fast as fast_reader
    from evalstore.ingest import readers as ing

    paths = []
    for i, label in enumerate(READER_VARIANTS):
        p = tmp_path / f"v{i:02d}.run"
        p.write_bytes(_variant_bytes(label))
        if _ingest_outcome(p)[0] == "ok":
            paths.append(p)
    gz = tmp_path / "g[1].run"
    gz.write_bytes(gzip.compress("".join(f"t{i % 5} Q0 g{i} {i} {i % 3} gz\n" for i in range(6000)).encode()))
    paths.append(gz)
    big = tmp_path / "big*.run"
    big.write_text("".join(f"t{i % 7}\tQ0\td{i}\t{i}\t{i % 13}.5\tbig\n" for i in range(20000)))
    paths.append(big)
    assert len(paths) > 8

    read = []
    real = fast_reader.RunReader.parts

    def parts(self):
        try:
            yield from real(self)
        except fast_reader.Declined:
            read.append(False)
            raise
        read.append(True)

    monkeypatch.setattr(fast_reader.RunReader, "parts", parts)
    with evalstore.open(":memory:") as s:
        s.ingest_run(paths, name_from="file", dedupe=True, progress=False)
        fast = s.sql("SELECT run, topic, doc, rank, line_no, submitted_rank, score FROM run_rows ORDER BY ALL").rows
    assert sum(read) > 3 and not all(read)  # most files read fast, some declined
    monkeypatch.setattr(ing, "fast_delimiter", lambda first: None)
    with evalstore.open(":memory:") as s:
        s.ingest_run(paths, name_from="file", dedupe=True, progress=False)
        general = s.sql("SELECT run, topic, doc, rank, line_no, submitted_rank, score FROM run_rows ORDER BY ALL").rows
    assert len(fast) > 26000 and fast == general


@pytest.mark.slow
def test_dedupe_after_a_messy_file_keeps_the_line_numbers(tmp_path, monkeypatch):
    """A messy file's fast-read rows are deleted (it is read again by the general reader); a later
    --dedupe deletion then lets DuckDB compact the table and renumber the rowids of the rows behind
    them. The line numbers computed from rowids must be written before that deletion, or the runs
    after the messy file get shifted (even negative) line numbers. (Found by a randomised
    comparison of the two readers; this is its reduced layout, about 1.3 M lines.)"""
    import random

    from evalstore.ingest import readers as ing

    rnd = random.Random(0)
    spec = [
        (250000, False, " "),
        (130000, False, " "),
        (130000, True, " "),
        (50, False, " "),
        (250000, False, " "),
        (20000, False, " "),
        (250000, False, " "),
        (50, False, "\t"),
        (50, False, " "),
        (1000, False, "\t"),
    ]
    paths = []
    for i, (n, messy, delim) in enumerate(spec):
        lines = [
            delim.join(
                [
                    f"t{k % 7}",
                    "Q0",
                    f"d{rnd.randrange(n * 2) if rnd.random() < 0.3 else k}",
                    str(k),
                    f"{rnd.randrange(100)}.5",
                    f"tag{i}",
                ]
            )
            for k in range(n)
        ]
        if messy:
            lines[n // 2] = lines[n // 2].replace(f"tag{i}", f"tag\t{i}")
        p = tmp_path / f"r{i}.run"
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)

    def line_numbers():
        with evalstore.open(":memory:") as s:
            s.ingest_run(paths, dedupe=True, name_from="file", progress=False)
            return s.sql(
                "SELECT run, min(line_no), max(line_no), sum(line_no), count(*) FROM run_rows GROUP BY run ORDER BY run"
            ).rows

    fast = line_numbers()
    monkeypatch.setattr(ing, "fast_delimiter", lambda first: None)
    assert fast == line_numbers()
    assert all(lo >= 1 for _, lo, _, _, _ in fast)

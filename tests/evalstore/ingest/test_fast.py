"""The fast run reader (evalstore.ingest.fast) against the store's ingest: for every file it reads,
the same rows, ranks and content hash; every file it declines goes to the general reader, and the
one-shot evaluation of files (evalstore.evaluate, `evalstore eval QRELS RUN...`) gives the same
result and the same messages as the store."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from fuzz_corpus import cases

import evalstore
from evalstore.errors import IngestError
from evalstore.ingest import fast
from evalstore.ingest.fast import has_duplicates, read_run, topic_blocks
from evalstore.ingest.files import compression, content_sha256, first_content_line
from evalstore.ingest.readers import fast_delimiter


def _lines(rows, sep=" "):
    return "".join(sep.join(map(str, r)) + "\n" for r in rows).encode()


def _variants() -> dict[str, bytes]:
    rnd = random.Random(7)
    rows = []
    for t in ("q1", "q10", "q2", "é"):
        for k in range(40):
            doc = f"d{rnd.randint(0, 60):03d}" if k else "dz"
            rows.append([t, "Q0", doc, k + 1, rnd.choice([1.5, 1.25, 0.5, 2, 3.0]), "sys"])
    # distinct docs per topic
    seen, uniq = set(), []
    for r in rows:
        if (r[0], r[2]) not in seen:
            seen.add((r[0], r[2]))
            uniq.append(r)
    ordered = sorted(uniq, key=lambda r: (r[0], -float(r[4]), r[2]))  # ties by docno ascending: not trec_eval's
    trec = sorted(uniq, key=lambda r: r[2], reverse=True)
    trec = sorted(trec, key=lambda r: (r[0], -float(r[4])))
    shuffled = list(uniq)
    rnd.shuffle(shuffled)
    interleaved = ordered[::2] + ordered[1::2]
    return {
        "score_sorted_ties_asc": _lines(ordered),
        "trec_order": _lines(trec),
        "shuffled": _lines(shuffled),
        "topics_interleaved": _lines(interleaved),
        "tabs": _lines(ordered, "\t"),
        "blank_lines": _lines(ordered[:5]) + b"\n\n" + _lines(ordered[5:]),
        "no_final_newline": _lines(ordered)[:-1],
        "plus_score": _lines([r[:4] + [f"+{r[4]}"] + r[5:] for r in ordered]),
        "exp_score": _lines([r[:4] + [f"{float(r[4]):e}"] + r[5:] for r in ordered]),
        "signed_rank": _lines([r[:3] + [f"+{r[3]}"] + r[4:] for r in ordered]),
        "crlf": _lines(ordered).replace(b"\n", b"\r\n"),
        "comment": b"# a comment\n" + _lines(ordered),
        "comment_inside": _lines(ordered[:3]) + b"#x Q0 d 1 1 sys\n" + _lines(ordered[3:]),
        "bom": b"\xef\xbb\xbf" + _lines(ordered),
        "double_space": _lines(ordered).replace(b" Q0 ", b"  Q0 ", 1),
        "leading_space": b" " + _lines(ordered),
        "mixed_ws": _lines(ordered[:3]) + _lines(ordered[3:], "\t"),
        "extra_field": _lines([r + ["x"] for r in ordered]),
        "other_tag": _lines(ordered[:-1]) + _lines([ordered[-1][:5] + ["other"]]),
        "duplicate": _lines(ordered + [ordered[0]]),
        "nan": _lines(ordered[:-1] + [ordered[-1][:4] + ["nan", "sys"]]),
        "q0_other": _lines([[r[0], "x", *r[2:]] for r in ordered]),
    }


def _store_rows(path: Path, dedupe: bool = False):
    with evalstore.open(":memory:") as s:
        [res] = s.ingest_run(str(path), format="trec", progress=False, dedupe=dedupe)
        rows = s.con.execute(
            "SELECT topic, doc, submitted_rank, score, line_no, rank FROM run_row_data ORDER BY line_no"
        ).fetchall()
        sha = s.con.execute("SELECT sha256 FROM run_meta").fetchall()[0][0]
        return res.name, rows, sha


@pytest.mark.parametrize("name", sorted(_variants()))
@pytest.mark.parametrize("gz", [False, True])
def test_fast_reader_reads_what_the_store_stores_or_declines(tmp_path, name, gz):
    data = _variants()[name]
    path = tmp_path / ("run.gz" if gz else "run.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    first = first_content_line(path)
    delim = fast_delimiter(first)
    fast = read_run(path, compression(path), delim, first.split(delim)[5]) if delim and first else None
    try:
        _, rows, sha = _store_rows(path)
    except IngestError:
        assert fast is None, f"{name}: the fast reader read a file the store refuses"
        return
    if fast is None:
        assert name not in ("score_sorted_ties_asc", "trec_order", "shuffled", "topics_interleaved", "tabs"), name
        return
    t = fast.table
    got = list(
        zip(*(t.column(c).to_pylist() for c in ("topic", "doc", "submitted_rank", "score", "ln", "rank")), strict=True)
    )
    assert got == rows
    assert fast.sha == sha == content_sha256(path)


@pytest.mark.parametrize("case", [c for c in cases() if c[1] == "run"], ids=lambda c: c[0])
def test_one_shot_gives_the_store_message_for_every_malformed_run(tmp_path, case):
    name, _, data, expect = case
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n")
    run = tmp_path / f"{name}.run"
    run.write_bytes(data)
    with pytest.raises(evalstore.EvalstoreError) as one_shot:
        evalstore.evaluate(str(qrels), [str(run)], ["AP"])
    with evalstore.open(":memory:") as s, pytest.raises(evalstore.EvalstoreError) as stored:
        s.ingest_qrels(str(qrels), progress=False)
        s.ingest_run(str(run), progress=False)
        s.evaluate("qrels", None, ["AP"], progress=False)
    assert str(one_shot.value) == str(stored.value)
    assert expect in str(one_shot.value).lower()


def test_one_shot_equals_the_store_on_mixed_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    rnd = random.Random(3)
    topics = ("q1", "q10", "q2", "é")
    qrels.write_text("".join(f"{t} 0 d{d:03d} {rnd.choice([0, 1, 2])}\n" for t in topics for d in range(0, 60, 2)))
    paths = []
    for i, (name, data) in enumerate(sorted(_variants().items())):
        if name in ("other_tag", "duplicate", "nan", "extra_field"):
            continue
        p = tmp_path / f"r{i}.txt"
        p.write_bytes(data.replace(b" sys", f" sys{i}".encode()).replace(b"\tsys", f"\tsys{i}".encode()))
        paths.append(str(p))
    metrics = ["AP", "nDCG@10", "P@5", "RR", "Bpref"]
    one = evalstore.evaluate(str(qrels), paths, metrics)
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(qrels), name="qrels.txt", progress=False)
        s.ingest_run(paths, progress=False)
        stored = s.evaluate("qrels.txt", None, metrics, progress=False)
    assert sorted(one.per_topic) == sorted(stored.per_topic)
    assert sorted(one.means) == sorted(stored.means)


@pytest.mark.parametrize(
    "options",
    [
        {"depth": 5},
        {"complete": True},
        {"convention": "ir_measures"},
        {"convention": "ntcireval"},
        {"convention": "trec_eval9"},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_one_shot_equals_the_store_under_every_option(tmp_path, options):
    """Runs read from files reach the SQL ranked by the reader and, when every pass ranks in
    trec_eval's order and no block reads rl_retrieved, only with their judged rows and each topic's
    count (a narrower ranked list); the store ranks and counts in SQL. Same scores either way,
    Utility (which reads rl_retrieved) included."""
    qrels = tmp_path / "qrels.txt"
    rnd = random.Random(5)
    topics = ("q1", "q10", "q2", "é", "q3")
    qrels.write_text("".join(f"{t} 0 d{d:03d} {rnd.choice([0, 1, 2])}\n" for t in topics for d in range(0, 60, 3)))
    paths = []
    for i, name in enumerate(("score_sorted_ties_asc", "trec_order", "shuffled", "tabs")):
        p = tmp_path / f"r{i}.txt"
        p.write_bytes(_variants()[name].replace(b"sys", f"sys{i}".encode()))
        paths.append(str(p))
    metrics = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "R@20", "Utility", "num_ret"]
    one = evalstore.evaluate(str(qrels), paths, metrics, **options)
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(qrels), name="qrels.txt", progress=False)
        s.ingest_run(paths, progress=False)
        stored = s.evaluate("qrels.txt", None, metrics, progress=False, **options)
    assert sorted(one.per_topic) == sorted(stored.per_topic)
    assert sorted(one.means) == sorted(stored.means)


def test_evaluator_given_a_path_or_the_rows_gives_the_same(tmp_path):
    """A run given to Evaluator.evaluate as a path comes ranked by the reader; the same rows as a
    dict are ranked (and narrowed) in Arrow: same values."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{t} 0 d{d:03d} {(d * 7) % 3}\n" for t in ("q1", "q10", "q2", "é") for d in range(0, 60, 2))
    )
    path = tmp_path / "run.txt"
    path.write_bytes(_variants()["score_sorted_ties_asc"])
    run: dict = {}
    for line in path.read_text().splitlines():
        t, _, d, _, s, _ = line.split()
        run.setdefault(t, {})[d] = float(s)
    with evalstore.Evaluator(str(qrels), ["AP", "nDCG@10", "P@5", "Bpref"]) as ev:
        assert ev.evaluate(str(path)) == ev.evaluate(run)


@pytest.mark.parametrize("block", [1, 7, 1 << 21])
def test_kept_ranks_are_the_evaluation_ranks_of_the_kept_rows_in_blocks_of_pairs(monkeypatch, block):
    """kept_ranks gives the kept rows the rank a full sort gives them, whatever the size of its
    blocks of (row, kept row) pairs (ties on the score broken by the docno, rows in any order)."""

    monkeypatch.setattr(fast, "PAIRS_PER_BLOCK", block)
    rng = np.random.default_rng(3)
    n, n_topics = 2_000, 40
    tcode = rng.integers(0, n_topics, n)
    score = rng.integers(0, 25, n).astype(np.float64)  # many ties
    doc = pa.array([f"d{i % 300:03d}" for i in rng.permutation(n)])
    kept = rng.random(n) < 0.05
    full = fast.evaluation_rank(tcode, n_topics, score, doc)
    got = fast.kept_ranks(tcode, n_topics, score, doc, kept)
    assert got is not None and np.array_equal(got, full[kept])


def test_ranked_rows_narrow_alike_in_score_order_and_shuffled():
    """A run in score order within topic blocks (ranked in one pass) and the same rows shuffled
    (the kept rows' pairs) give the same narrowed rows and ranks."""
    import numpy as np
    import pyarrow as pa

    from evalstore.ingest import fast

    rng = np.random.default_rng(5)
    topic = np.repeat([f"t{i}" for i in range(30)], 50)
    score = rng.integers(0, 10, len(topic)).astype(np.float64)  # ties
    doc = np.array([f"d{i % 97:02d}" for i in range(len(topic))])
    order = np.lexsort((-score, topic))  # topic blocks, descending score
    table = pa.table({"topic": topic[order], "doc": doc[order], "score": score[order],
                      "ln": np.arange(len(topic))[order]})  # fmt: skip
    keep = pa.array([f"d{i:02d}" for i in range(0, 97, 9)])
    tc = pa.compute.dictionary_encode(table.column("topic").combine_chunks()).indices.to_numpy()
    assert fast.in_score_blocks(tc, 30, table.column("score").to_numpy())
    shuffled = table.take(pa.array(rng.permutation(table.num_rows)))
    (a, ca), (b, cb) = fast.ranked_rows(table, keep), fast.ranked_rows(shuffled, keep)
    assert a.num_rows == b.num_rows > 0 and ca.sort_by("topic").equals(cb.sort_by("topic"))
    assert a.sort_by("ln").equals(b.sort_by("ln"))


@pytest.mark.parametrize("lengths", [[50] * 30, [1, 80, 3, 40, 40, 7, 60], [5] * 10 + [1], [200, 1, 1]])
def test_blocks_sorted_as_matrix_rows_rank_as_one_sort(monkeypatch, lengths):
    """A run whose topics are each one block, not in score order (a dict's rows), is ranked by
    sorting the blocks as the rows of one padded matrix: the ranks of one whole sort, ties on the
    score broken by the docno (descending, byte-wise); blocks too unequal fall back to that sort."""
    import numpy as np
    import pyarrow as pa

    from evalstore.ingest import fast

    rng = np.random.default_rng(len(lengths))
    tcode = np.repeat(np.arange(len(lengths)), lengths)
    score = rng.integers(0, 6, len(tcode)).astype(np.float64)  # many ties
    doc = pa.array([f"d{i}" for i in rng.permutation(len(tcode))])  # d10 < d9 byte-wise
    got = fast.evaluation_rank(tcode, len(lengths), score, doc)
    docs = doc.to_pylist()  # the reference: each topic's rows sorted by hand
    want = np.empty(len(tcode), dtype=np.int64)
    for t in range(len(lengths)):
        rows = sorted(np.flatnonzero(tcode == t), key=lambda i: (-score[i], [-b for b in docs[i].encode()] + [1]))
        want[rows] = np.arange(1, len(rows) + 1)
    assert np.array_equal(got, want)
    monkeypatch.setattr(fast, "PADDED_CELLS_PER_ROW", 0)  # the whole sort
    assert np.array_equal(fast.evaluation_rank(tcode, len(lengths), score, doc), want)


def test_topics_coded_by_blocks_as_dictionary_encode_codes_them():
    import numpy as np
    import pyarrow as pa

    for topics in (
        ["a", "a", "b", "c", "c"],
        ["b", "b", "a"],
        ["a", "b", "a"],
        ["x"],
        ["1", "10", "2"],
        ["c", "a", "a", "b"],
    ):
        arr = pa.array(topics)
        got, want = topic_blocks(arr), pc.dictionary_encode(arr)
        assert got.dictionary.equals(want.dictionary) and got.indices.to_pylist() == want.indices.to_pylist()
    assert has_duplicates(np.array([0, 0, 1]), np.array([3, 4, 3]), 5) is False
    assert has_duplicates(np.array([0, 1, 1]), np.array([3, 4, 4]), 5) is True


@pytest.mark.parametrize("order", ["ascending", "descending", "repeated"])
def test_a_topic_met_again_in_a_later_part_declines_the_file(tmp_path, order):
    """Parts of a few topics each: topics in ascending order are told apart by their order, others
    by a set of them; a topic met again in a later part sends the file to the general reader."""
    from evalstore.ingest import fast

    topics = [f"q{t:02d}" for t in range(40)]
    if order == "descending":
        topics.reverse()
    if order == "repeated":
        topics.append("q03")
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{t} Q0 d{d}{t} {d + 1} {9 - d}.5 tag\n" for t in topics for d in range(5)))
    reader = fast.RunReader(path, "", " ", "tag", want_sha=False, block_bytes=300)
    if order == "repeated":
        with pytest.raises(fast.Declined):
            list(reader.parts())
        return
    parts = list(reader.parts())
    assert len(parts) > 5 and reader.n_topics == 40 and reader.n_rows == 200


def test_docno_keys_are_equal_for_equal_docnos_and_tell_repeats():
    same_length = pa.array(["D001", "D002", "D001", "X999"])
    keys = fast.docno_keys(same_length)
    assert keys[0] == keys[2] and len(set(keys.tolist())) == 3
    varying = pa.array(["a", "ab", "a", "abcdefghijk", "abcdefghijk", "abcdefghijl"]).slice(1)  # (an offset)
    keys = fast.docno_keys(varying)
    assert keys[2] == keys[3] and len(set(keys.tolist())) == 4
    assert fast.docno_keys(pa.array(["é", "abc"])) is None  # other lengths, not ASCII
    assert fast.docno_keys(pa.array(["x" * (fast.KEY_BYTES + 1)])) is None
    assert fast.docno_keys(pa.array(["é1", "é2"])) is not None  # one length: bytes as they are
    tcode = np.array([0, 0, 1, 1])
    assert fast.repeats_told_apart(tcode, pa.array(["a", "b", "a", "b"])) is False
    assert fast.repeats_told_apart(tcode, pa.array(["a", "b", "c", "c"])) is None  # a repeat: the dictionary decides
    assert fast.repeats_told_apart(tcode, pa.array(["é", "ab", "c", "d"])) is None


@pytest.mark.parametrize("told", [True, False])
def test_the_reader_finds_repeats_with_or_without_the_keys(monkeypatch, tmp_path, told):
    """A repeated docno in a topic declines the file whichever way repeats are found; the rows of a
    file without one are the same."""
    if not told:
        monkeypatch.setattr(fast, "repeats_told_apart", lambda *a: None)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{t} Q0 doc{d:03d} {d + 1} {9 - d}.5 tag\n" for t in range(3) for d in range(5)))
    got = read_run(path, "", " ", "tag", want_sha=False)
    assert got is not None and got.n_rows == 15
    path.write_text(path.read_text() + "q9 Q0 a 1 2.0 tag\nq9 Q0 bb 2 1.0 tag\nq9 Q0 a 3 0.5 tag\n")
    assert read_run(path, "", " ", "tag", want_sha=False) is None


@pytest.mark.parametrize(
    ("tcode", "docs", "told"),
    [
        ([0, 0, 0, 1, 1, 1], ["a", "b", "c", "a", "b", "c"], False),  # blocks of one length
        ([0, 0, 0, 1, 1, 1], ["a", "b", "a", "a", "b", "c"], None),
        ([0, 0, 0, 0, 1, 1], ["a", "b", "c", "d", "a", "b"], False),  # padded blocks
        ([0, 0, 0, 0, 1, 1], ["a", "b", "c", "d", "b", "b"], None),
        ([0, 1, 0, 1], ["a", "a", "b", "b"], False),  # a topic in two blocks: sorted whole
        ([0, 1, 0, 1], ["a", "b", "a", "c"], None),
        ([0, 1] + [2] * 20, ["x", "x"] + [f"d{i}" for i in range(20)], False),  # too ragged: sorted whole
        ([0, 1] + [2] * 20, ["x", "x"] + [f"d{i % 19}" for i in range(20)], None),
    ],
)
def test_repeats_told_apart_within_topic_blocks(tcode, docs, told):
    assert fast.repeats_told_apart(np.array(tcode, dtype=np.int32), pa.array(docs)) is told


def test_encoded_keeps_a_dictionary_array_and_encodes_others():
    """Arrow before 15 has no dictionary_encode of a dictionary array (the qrels' coded table
    reaches QrelsIndex so): ``encoded`` hands it on as it is."""
    plain = pa.array(["b", "a", "b"])
    coded = pc.dictionary_encode(plain)
    assert fast.encoded(coded) is coded
    assert fast.encoded(plain).equals(coded)

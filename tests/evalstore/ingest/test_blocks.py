"""Run files read in bounded blocks (evalstore.ingest.blocks, fast.RunReader): with blocks of a few
hundred bytes every file becomes many parts, and ingest, the one-shot evaluation and the fast
reader itself must give exactly what they give reading the file whole (or what the general reader
gives, when a file is declined halfway: a topic in two places, a bad line, another tag)."""

from __future__ import annotations

import gzip
import random
import threading
import time
from pathlib import Path

import pytest

import evalstore
from evalstore.errors import IngestError
from evalstore.evaluation import in_memory as evaluator_module
from evalstore.ingest import blocks
from evalstore.ingest.blocks import LineBlocks, Unreadable
from evalstore.ingest.fast import RunReader, read_run
from evalstore.ingest.files import compression, content_sha256, file_sha256
from evalstore.ingest.prefetch import prefetched

TOPICS = [f"q{i}" for i in range(1, 41)] + ["é1", "z"]


def _run_lines(tag: str = "sys", seed: int = 1, topics=TOPICS, per_topic: int = 30, ties: bool = True) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for t in topics:
        docs = rnd.sample(range(200), per_topic)
        scores = sorted((rnd.choice([1.0, 1.5, 2.0, 2.5]) if ties else rnd.random() for _ in docs), reverse=True)
        out += [f"{t} Q0 d{d:03d} {k + 1} {s} {tag}\n" for k, (d, s) in enumerate(zip(docs, scores))]
    return out


def _qrels(path: Path, seed: int = 2) -> Path:
    rnd = random.Random(seed)
    lines = (f"{t} 0 d{d:03d} {rnd.choice([0, 1, 1, 2])}\n" for t in TOPICS[:-1] for d in range(0, 200, 4))
    path.write_text("".join(lines))
    return path


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 300)


def _rows(table):
    cols = ("topic", "doc", "submitted_rank", "score", "ln", "rank")
    return list(zip(*(table.column(c).to_pylist() for c in cols), strict=True))


@pytest.mark.parametrize("gz", [False, True])
def test_line_blocks_end_at_line_feeds_and_hash_as_read(tmp_path, gz):
    data = "".join(_run_lines()).encode()[:-1]  # no final line feed
    path = tmp_path / ("run.gz" if gz else "run.txt")
    # a gzip file of two members, as `cat a.gz b.gz` makes
    path.write_bytes(gzip.compress(data[:5000]) + gzip.compress(data[5000:]) if gz else data)
    lb = LineBlocks(path, compression(path), block_bytes=256)
    got = list(lb)
    assert len(got) > 20 and b"".join(got) == data
    assert all(b.endswith(b"\n") for b in got[:-1])
    assert lb.sha == content_sha256(path) and lb.file_sha == file_sha256(path)


def test_line_blocks_refuse_a_line_longer_than_allowed_and_damaged_gzip(tmp_path):
    long = tmp_path / "long.txt"
    long.write_bytes(b"q1 Q0 " + b"d" * 5000 + b" 1 1 s\n")
    with pytest.raises(Unreadable):
        list(LineBlocks(long, "none", block_bytes=256, max_line=1000))
    broken = tmp_path / "b.gz"
    broken.write_bytes(gzip.compress(b"q1 Q0 d1 1 1 s\n" * 2000)[:-30])
    with pytest.raises(Unreadable):
        list(LineBlocks(broken, "gzip", block_bytes=256))


@pytest.mark.parametrize("ties", [True, False])
def test_the_fast_reader_in_small_blocks_reads_what_it_reads_whole(tmp_path, ties):
    path = tmp_path / "run.txt"
    path.write_text("".join(_run_lines(ties=ties)))
    whole = read_run(path, "none", " ", "sys", block_bytes=1 << 20)
    reader = RunReader(path, "none", " ", "sys", block_bytes=200)
    parts = list(reader.parts())
    assert whole is not None and len(parts) > 20
    assert [r for p in parts for r in _rows(p.table)] == _rows(whole.table)
    topic_sets = [set(p.table.column("topic").to_pylist()) for p in parts]
    assert sum(len(s) for s in topic_sets) == len(set().union(*topic_sets)) == len(TOPICS)  # whole topics
    assert (reader.sha, reader.n_rows, reader.n_topics) == (whole.sha, whole.n_rows, whole.n_topics)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize(
    "damage",
    ["topic_again", "bad_line_late", "other_tag_late", "crlf_late", "duplicate_late", "none"],
)
def test_ingest_in_small_blocks_stores_what_the_general_reader_stores(tmp_path, monkeypatch, damage):
    """Parts are stored as they are read; a file declined halfway has its rows taken back and goes to
    the general reader, which stores the same rows or gives the same error."""
    lines = _run_lines()
    if damage == "topic_again":  # q1 again at the end: the file does not list each topic in one block
        lines.append("q1 Q0 d999 99 0.1 sys\n")
    elif damage == "bad_line_late":
        lines.insert(len(lines) - 3, "q40 Q0 dx 7 notanumber sys\n")
    elif damage == "other_tag_late":
        lines[-5] = lines[-5].replace(" sys", " other")
    elif damage == "crlf_late":
        lines[-5] = lines[-5].replace("\n", "\r\n")
    elif damage == "duplicate_late":
        lines.append(lines[-1].replace(" 30 ", " 31 "))
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))

    def stored(fast: bool):
        if not fast:
            monkeypatch.setattr("evalstore.ingest.readers.fast_delimiter", lambda first: None)
        try:
            with evalstore.open(":memory:") as s:
                [res] = s.ingest_run(str(path), progress=False)
                rows = s.sql("SELECT run, topic, doc, rank, line_no, submitted_rank, score FROM run_rows ORDER BY ALL")
                meta = s.sql("SELECT name, tag, sha256, n_topics, n_rows FROM runs").rows
                return res.summary(), rows.rows, meta
        except IngestError as e:
            return str(e)
        finally:
            monkeypatch.undo()
            monkeypatch.setattr(blocks, "BLOCK_BYTES", 300)

    assert stored(True) == stored(False)


@pytest.mark.usefixtures("small_blocks")
def test_replacing_with_a_file_declined_halfway_keeps_the_note_of_dropped_analyses(tmp_path):
    qrels = _qrels(tmp_path / "qrels.txt")
    first, other, second = tmp_path / "a.txt", tmp_path / "o.txt", tmp_path / "b.txt"
    first.write_text("".join(_run_lines(seed=1)))
    other.write_text("".join(_run_lines("other", seed=2)))
    second.write_text("".join(_run_lines(seed=3)) + "q1 Q0 d999 99 0.1 sys\n")  # declined at its end
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(qrels), progress=False)
        s.ingest_run([str(first), str(other)], progress=False)
        s.compare("qrels", "other", None, ["AP"])
        [res] = s.ingest_run(str(second), replace=True, progress=False)
        assert res.status == "replaced"
        assert "dropped 1 stored analysis(es) that read the old content" in res.summary()
        rows = s.sql("SELECT count(*) FROM run_rows WHERE run = 'sys'").rows
        assert rows == [(len(_run_lines(seed=3)) + 1,)]
        assert s.sql("SELECT sha256 FROM runs WHERE name = 'sys'").rows == [(content_sha256(second),)]
        assert s.sql("SELECT count(*) FROM scores WHERE run = 'sys'").rows == [(0,)]


def _one_shot_and_store(qrels: Path, paths: list[str], metrics, **options):
    one = evalstore.evaluate(str(qrels), paths, metrics, **options)
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(str(qrels), name=qrels.name, progress=False)
        s.ingest_run(paths, progress=False)
        stored = s.evaluate(qrels.name, None, metrics, progress=False, **options)
    return one, stored


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize(
    "options",
    [{}, {"depth": 5}, {"complete": True}, {"convention": "ir_measures"}, {"convention": "ntcireval"}],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default",
)
def test_one_shot_in_parts_and_batches_equals_the_store(tmp_path, monkeypatch, options):
    """Many parts per file, several batches per call (parts of one run in several batches), a file
    declined at its end (read again by the general reader after some of its parts were evaluated),
    a run with no topic of the qrels and qrels topics no run has."""
    monkeypatch.setattr(evaluator_module, "BATCH_LINES", 100)
    monkeypatch.setattr(evaluator_module, "BATCH_PER_QRELS_ROW", 0)
    restarts = []
    real = evaluator_module.read_runs

    def spy(*a, **k):
        for batch in real(*a, **k):
            restarts.extend(p.name for p in batch if p.restart)
            yield batch

    monkeypatch.setattr(evaluator_module, "read_runs", spy)
    qrels = _qrels(tmp_path / "qrels.txt")
    paths = []
    for i in range(3):
        p = tmp_path / f"r{i}.txt"
        lines = _run_lines(f"sys{i}", seed=10 + i, topics=TOPICS[i * 3 :])
        if i == 1:
            lines.append(f"{TOPICS[5]} Q0 d999 99 0.1 sys1\n")  # a topic again: declined at the end
        p.write_text("".join(lines))
        paths.append(str(p))
    (tmp_path / "r3.txt").write_text("".join(_run_lines("elsewhere", topics=["z"])))  # no topic of the qrels
    paths.append(str(tmp_path / "r3.txt"))
    metrics = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "R@20", "Utility", "num_ret", "NumQ"]
    one, stored = _one_shot_and_store(qrels, paths, metrics, **options)
    assert sorted(one.per_topic) == sorted(stored.per_topic)
    assert sorted(one.means) == sorted(stored.means)
    assert [m[0] for m in one.means][:: len(metrics)] == ["sys0", "sys1", "sys2"]
    assert any("elsewhere" in n for n in one.notes) and any("elsewhere" in n for n in stored.notes)
    assert restarts == ["sys1"]  # its parts evaluated in an earlier batch were void


@pytest.mark.usefixtures("small_blocks")
def test_evaluator_given_a_path_reads_every_part(tmp_path):
    qrels = _qrels(tmp_path / "qrels.txt")
    path = tmp_path / "r.txt"
    lines = _run_lines()
    path.write_text("".join(lines))
    rows = {}
    for line in lines:
        t, _, d, _, score, _ = line.split()
        rows.setdefault(t, {})[d] = float(score)
    with evalstore.Evaluator(str(qrels), ["AP", "P@5"]) as ev:
        assert ev.evaluate(str(path)) == ev.evaluate(rows)
        assert len(ev.evaluate(str(path))) == len(TOPICS) - 1


def test_prefetched_hands_items_in_order_raises_where_a_source_fails_and_stops_left_sources():
    def source(i):
        def items():
            for k in range(50):
                if i == 2 and k == 7:
                    raise ValueError("broken")
                yield (i, k)

        return items

    got = []
    failed = []
    for i, items in enumerate(prefetched([source(i) for i in range(6)], workers=2, ahead=3, depth=2)):
        try:
            for item in items:
                got.append(item)
                if i == 4 and item[1] == 3:
                    break  # left early: its producer must stop, the next sources still come
        except ValueError:
            failed.append(i)
    assert failed == [2]
    assert got == [(i, k) for i in range(6) for k in range(50) if (i != 2 or k < 7) and (i != 4 or k <= 3)]
    time.sleep(0.2)
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]

#!/usr/bin/env python3
"""CPU seconds per stage of the one-shot evaluation of the synthetic 5 M lines (7 measures).

    python bench/bench_stages.py [--work-dir DIR] [--repeat 3]

Each stage is run on its own, on one thread where the code allows it, over all 100 run files, and
timed by the process's CPU seconds (user + system) and wall seconds; the minimum over ``--repeat``
rounds is shown. Stages of the path ``evalstore eval QRELS RUN...`` takes since the fast reader:

* ``read``: the files' bytes (one read) and Arrow's CSV parse (score typed, rank as text);
* ``check``: the byte scan (other whitespace, CR, control bytes) and the checks on the parsed columns
  (one tag, rank digits and its cast, finite scores, empty fields, comment lines, long lines);
* ``key encoding``: dictionary codes of topics and documents, and the duplicate screen on them;
* ``rank``: trec_eval's rank from the file order (only tied rows sorted);
* ``join + metrics``: DuckDB's query over the ranked rows (ranked list on the qrels, the seven
  metric blocks), on every core, in batches of a million lines;
* ``write``: the EvalResult (per-topic rows, means) and the leaderboard as text.

With ``--before``, the stages of the path before the fast reader, measured with that code (run it
with ``PYTHONPATH`` at an older checkout): ingest into an in-memory store (read into staging,
checks, hash, rank and insert), the rows read back as Arrow, and the Evaluator's query, which ranks
them again.
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MEASURES = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "R@1000"]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    c, t = cpu(), time.perf_counter()
    out = fn()
    return cpu() - c, time.perf_counter() - t, out


def after(qrels: str, files: list[str]) -> list[tuple[str, float, float]]:
    import hashlib
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from evalstore.evaluation.in_memory import Evaluator
    from evalstore.ingest import fast
    from evalstore.output.formats import write as write_report
    from evalstore.results import tables as report_rows

    tags = [Path(f).read_text().split("\n", 1)[0].split()[5] for f in files]
    out: list[tuple[str, float, float]] = []
    data: list[bytes] = []
    c, w, _ = timed(lambda: data.extend(Path(f).read_bytes() for f in files))
    parsed: list[pa.Table] = []

    def parse():
        for d in data:
            parsed.append(
                pcsv.read_csv(
                    pa.py_buffer(d), read_options=fast._READ, parse_options=fast.PARSE[" "],
                    convert_options=fast._CONVERT,
                )
            )  # fmt: skip

    c2, w2, _ = timed(parse)
    out.append(("read", c + c2, w + w2))
    c3, w3, _ = timed(lambda: [hashlib.sha256(d).hexdigest() for d in data])
    out.append(("hash (ingest only)", c3, w3))

    def check():
        for d, t, tag0 in zip(data, parsed, tags):
            assert fast.clean(d, " ")
            assert pc.all(pc.equal(t.column("tag"), tag0)).as_py()
            text = t.column("rank").combine_chunks()
            assert pc.all(pc.ascii_is_decimal(text)).as_py()
            pc.cast(text, pa.int64())
            assert pc.all(pc.is_finite(t.column("score"))).as_py()
            assert fast._nonempty(t.column("q0"))
            sum(pc.max(pc.binary_length(t.column(c))).as_py() for c in ("topic", "q0", "doc", "rank", "tag"))

    c, w, _ = timed(check)
    out.append(("check", c, w))
    codes = []

    def encode():
        for t in parsed:
            topics = pc.dictionary_encode(t.column("topic").combine_chunks())
            docs = pc.dictionary_encode(t.column("doc").combine_chunks())
            assert fast._nonempty(topics.dictionary) and fast._nonempty(docs.dictionary)
            assert not pc.any(pc.starts_with(topics.dictionary, "#")).as_py()
            tcode = topics.indices.to_numpy()
            assert not fast._has_duplicates(tcode, docs.indices.to_numpy(), len(docs.dictionary))
            codes.append((tcode, len(topics.dictionary), topics, docs))

    c, w, _ = timed(encode)
    out.append(("key encoding + duplicate screen", c, w))
    ranked: list[pa.Table] = []

    def rank():
        for t, (tcode, n_topics, _, _) in zip(parsed, codes):
            score = t.column("score").combine_chunks()
            doc = t.column("doc").combine_chunks()
            r = fast.evaluation_rank(tcode, n_topics, score.to_numpy(), doc)
            ranked.append(
                pa.table({"topic": t.column("topic"), "doc": doc, "score": score,
                          "ln": pa.array(np.arange(1, len(r) + 1)), "rank": pa.array(r)})
            )  # fmt: skip

    c, w, _ = timed(rank)
    out.append(("rank", c, w))
    data.clear()
    parsed.clear()
    ev = Evaluator(qrels, MEASURES, prepare=False, threads=os.cpu_count())
    narrow: list[tuple[pa.Table, pa.Table]] = []

    def keep():
        for t, (_, _, topics, docs) in zip(ranked, codes):
            narrow.append(fast.narrowed(t, topics, docs, ev._judged_docs))

    c, w, _ = timed(keep)
    out.append(("narrow to the judged docnos, count per topic", c, w))
    names = [f"r{i}" for i in range(len(ranked))]
    rows: list = []
    step = 100  # one query: the 1.10 M rows of judged docnos

    def join():
        for start in range(0, len(narrow), step):
            part = narrow[start : start + step]
            rows.extend(ev._run([t for t, _ in part], names[start : start + step], [c for _, c in part]))

    c, w, _ = timed(join)
    out.append(("join + metrics (DuckDB)", c, w))

    def write():
        batches = [[(names[i], t, c) for i, (t, c) in enumerate(narrow)]]
        ev._run = lambda tables, ns, counts=None, _rows=iter([rows]): next(_rows, [])  # the rows computed above
        res = ev._result(batches, "qrels")
        write_report(report_rows.leaderboard(res, "qrels"), "table", io.StringIO())

    c, w, _ = timed(write)
    out.append(("shape + write", c, w))
    return out


def before(qrels: str, files: list[str]) -> list[tuple[str, float, float]]:
    import evalstore
    from evalstore.db.query import arrow_table
    from evalstore.evaluation.in_memory import Evaluator
    from evalstore.ingest import checks, readers, runs
    from evalstore.ingest import files as ing_files
    from evalstore.ingest.formats import RUN_COLUMNS
    from evalstore.ingest.staging import Staging
    from evalstore.ingest.write import store_runs

    out: list[tuple[str, float, float]] = []
    s = evalstore.open(":memory:")
    paths = [Path(f) for f in files]
    stage: dict = {}
    c, w, _ = timed(lambda: stage.update(plan=runs._plan(paths, None, "trec", "tag")))
    out.append(("plan + hash (sha256 of every file)", c, w))
    src, groups, _ = stage["plan"]
    with Staging(s.con, "runs", RUN_COLUMNS) as st:

        class Bar:
            def advance(self, n=1):
                pass

            def update(self, **k):
                pass

        c, w, _ = timed(lambda: readers.load(st, src, Bar()))
        out.append(("read (DuckDB read_csv into staging)", c, w))

        def check():
            stats = checks.file_stats(st, ", min(tag), max(tag), count(DISTINCT topic)")
            for g in groups:
                runs.name_run(st, g, stats[g.idx])
            checks.duplicates(st)
            return stats

        c, w, stats = timed(check)
        out.append(("check (file stats, tags, duplicate screen)", c, w))
        gstats = {g.idx: (stats[g.idx][0], stats[g.idx][5]) for g in groups}

        def store():
            with s.transaction():
                store_runs(s, st, groups, gstats, {}, False, "trec", src[0].layout.rank_sql)

        c, w, _ = timed(store)
        out.append(("rank (VARCHAR sort) + store", c, w))
    tables = {}

    def back():
        for name, rid in s.con.execute("SELECT name, run_id FROM run_meta").fetchall():
            tables[name] = arrow_table(
                s.con,
                "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score FROM run_row_data "
                "WHERE run_id = ? ORDER BY line_no",
                [rid],
            )

    c, w, _ = timed(back)
    out.append(("read back as Arrow", c, w))
    s.close()
    ev = Evaluator(qrels, MEASURES, prepare=False)
    c, w, res = timed(lambda: ev.result(tables, "qrels"))
    out.append(("rank again + join + metrics + shape (Evaluator)", c, w))
    del ing_files
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "evalstore-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", action="store_true", help="the stages of the code before the fast reader")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_trec import synth_collection

    col = synth_collection(Path(a.work_dir))
    assert col is not None
    files = sorted(glob.glob(str(Path(col["qrels"]).parent / "runs" / "*.txt")))
    fn = before if a.before else after
    best: dict[str, tuple[float, float]] = {}
    order: list[str] = []
    for _ in range(a.repeat):
        for name, c, w in fn(col["qrels"], files):
            if name not in best:
                order.append(name)
            if name not in best or c < best[name][0]:
                best[name] = (c, w)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; best of {a.repeat}")
    print(f"{'stage':50s} {'CPU s':>7s} {'wall s':>7s}")
    for name in order:
        print(f"{name:50s} {best[name][0]:7.2f} {best[name][1]:7.2f}")
    print(f"{'total':50s} {sum(b[0] for b in best.values()):7.2f} {sum(b[1] for b in best.values()):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

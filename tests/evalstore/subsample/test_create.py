"""Judgment subsamples (evalstore.subsample, `evalstore subsample`, `evalstore eval --subsamples`)."""

from __future__ import annotations

import csv
import hashlib
import io

import numpy as np
import pytest
from support import SAMPLE, run_cli

import evalstore
from evalstore.errors import NotFoundError
from evalstore.ingest import qrels_from_dict
from evalstore.metrics import ranked_list
from evalstore.metrics.options import EvalOptions
from evalstore.subsample import (
    BOMPADA_FRACTIONS,
    SubsampleError,
    create_subsamples,
    drop_subsamples,
    evaluate_subsamples,
    export_qrels,
    fraction_label,
    list_subsamples,
    parse_fractions,
    qrels_text,
    resolve_subsamples,
    subsample_name,
    topic_sizes,
)


def rows_of(store, name):
    return set(store.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = ?", [name]).rows)


def sizes(store, name):
    return {t: (r, n) for t, _, _, r, n in topic_sizes(store, name).rows}


# A collection with known per-topic sizes: (R, N) = A (10, 100), B (3, 5), C (100, 20), D (0, 30);
# topic A also has 5 pooled-but-unjudged rows (grade -1); relevant docs have grades 1-3.
def sized_qrels():
    q = {}
    for topic, (R, N) in {"A": (10, 100), "B": (3, 5), "C": (100, 20), "D": (0, 30)}.items():
        q[topic] = {f"{topic}-r{i:03d}": 1 + i % 3 for i in range(R)}
        q[topic].update({f"{topic}-n{i:03d}": 0 for i in range(N)})
    q["A"].update({f"A-p{i}": -1 for i in range(5)})
    return q


@pytest.fixture
def sized(store):
    qrels_from_dict(store, "base", sized_qrels())
    return store


# --------------------------------------------------------------------------- parameters and names
def test_fractions_presets_and_names():
    assert parse_fractions("bompada") == list(BOMPADA_FRACTIONS)
    assert len(BOMPADA_FRACTIONS) == 14 and BOMPADA_FRACTIONS[:6] == (0.01, 0.02, 0.03, 0.04, 0.05, 0.1)
    assert parse_fractions("sakai") == [0.9, 0.7, 0.5, 0.3, 0.1]
    assert parse_fractions("0.9, 0.5,50%,1") == [0.9, 0.5, 1.0]
    for bad in ("0", "1.5", "-0.1", "abc", "", "nan"):
        with pytest.raises(SubsampleError):
            parse_fractions(bad)
    assert fraction_label(0.05) == "0.05" and fraction_label(1.0) == "1" and fraction_label(0.1) == "0.1"
    assert subsample_name("dl19", 0.05, 0) == "dl19@bv0.05#0"


# --------------------------------------------------------------------------- sizes
def test_sizes_per_topic_with_minimums_caps_and_rounding(sized):
    """R_f = min(R, max(1, floor(R f + 1e-9))), N_f = min(N, max(10, floor(N f + 1e-9)))."""
    names = create_subsamples(sized, "base", [0.7, 0.29, 0.1, 0.01])
    assert names == ["base@bv0.7#0", "base@bv0.29#0", "base@bv0.1#0", "base@bv0.01#0"]
    expected = {
        "base@bv0.7#0": {"A": (7, 70), "B": (2, 5), "C": (70, 14), "D": (0, 21)},
        # 0.29 * 100 = 28.999999999999996 in floating point: the rule keeps 29, not 28
        "base@bv0.29#0": {"A": (2, 29), "B": (1, 5), "C": (29, 10), "D": (0, 10)},
        "base@bv0.1#0": {"A": (1, 10), "B": (1, 5), "C": (10, 10), "D": (0, 10)},
        "base@bv0.01#0": {"A": (1, 10), "B": (1, 5), "C": (1, 10), "D": (0, 10)},
    }
    for name, want in expected.items():
        assert sizes(sized, name) == want, name
    # the pooled-but-unjudged rows are copied unchanged
    for name in names:
        assert {d for _, d, g in rows_of(sized, name) if g < 0} == {f"A-p{i}" for i in range(5)}
    # graded relevant docs keep their grades
    parent = {(t, d): g for t, d, g in rows_of(sized, "base")}
    assert all(parent[(t, d)] == g for t, d, g in rows_of(sized, "base@bv0.29#0"))


def test_other_minimums(sized):
    create_subsamples(sized, "base", [0.01, 0.5], min_rel=0, min_nonrel=0, prefix="zero")
    assert sizes(sized, "zero@bv0.5#0") == {"A": (5, 50), "B": (1, 2), "C": (50, 10), "D": (0, 15)}
    # with both minimums 0 topic D keeps nothing at 0.01 and is absent from the subsample
    assert sizes(sized, "zero@bv0.01#0") == {"A": (0, 1), "B": (0, 0), "C": (1, 0), "D": (0, 0)}
    assert {t for t, _, _ in rows_of(sized, "zero@bv0.01#0")} == {"A", "C"}  # A: pooled rows, C: one relevant
    create_subsamples(sized, "base", [0.1], min_rel=5, min_nonrel=50, prefix="big")
    assert sizes(sized, "big@bv0.1#0") == {"A": (5, 50), "B": (3, 5), "C": (10, 20), "D": (0, 30)}


def test_relation_lists_derivation_and_sizes(sized):
    store = sized
    store.sql("UPDATE qrels_meta SET default_gains = '1:2:3' WHERE name = 'base'", write=True)
    create_subsamples(store, "base", "0.5,0.1", trials=2, seed=3)
    res = list_subsamples(store, "base").records()
    assert [(r["name"], r["fraction"], r["trial"]) for r in res] == [
        ("base@bv0.5#0", 0.5, 0),
        ("base@bv0.5#1", 0.5, 1),
        ("base@bv0.1#0", 0.1, 0),
        ("base@bv0.1#1", 0.1, 1),
    ]
    r = res[0]
    assert (r["parent"], r["method"], r["seed"], r["min_rel"], r["min_nonrel"]) == (
        "base",
        "buckley_voorhees",
        3,
        1,
        10,
    )
    assert (r["n_rel"], r["n_nonrel"], r["n_topics"]) == (5 + 1 + 50 + 0, 50 + 5 + 10 + 15, 4)
    assert r["n_judged"] == r["n_rel"] + r["n_nonrel"] + 5
    meta = store.sql("SELECT format, default_gains, max_grade FROM qrels_sets WHERE name = 'base@bv0.1#1'").rows[0]
    assert meta == ("subsample", "1:2:3", 3)


# --------------------------------------------------------------------------- nesting, determinism
def test_nesting_within_a_trial(sample_store):
    fr = [0.9, 0.7, 0.5, 0.3, 0.1]
    create_subsamples(sample_store, "sample", fr, trials=3, min_nonrel=2)
    for t in range(3):
        sets = [rows_of(sample_store, f"sample@bv{fraction_label(f)}#{t}") for f in fr]
        for big, small in zip(sets, sets[1:]):
            assert small < big
        assert sets[0] < rows_of(sample_store, "sample")
    # different trials shuffle differently
    assert rows_of(sample_store, "sample@bv0.5#0") != rows_of(sample_store, "sample@bv0.5#1")


def test_determinism_across_stores_and_input_order(tmp_path):
    lines = (SAMPLE / "qrels.txt").read_text().splitlines()
    shuffled = tmp_path / "q.txt"
    shuffled.write_text("\n".join(reversed(lines)) + "\n")
    a, b = evalstore.open(":memory:"), evalstore.open(":memory:")
    try:
        a.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        b.ingest_qrels(shuffled, name="q", progress=False)
        create_subsamples(a, "q", [0.5, 0.2], trials=2, seed=11, min_nonrel=3)
        create_subsamples(b, "q", [0.5, 0.2], trials=2, seed=11, min_nonrel=3)
        for name in ("q@bv0.5#0", "q@bv0.5#1", "q@bv0.2#0", "q@bv0.2#1"):
            assert rows_of(a, name) == rows_of(b, name)
        create_subsamples(b, "q", [0.5], seed=12, prefix="other", min_nonrel=3)
        assert rows_of(b, "other@bv0.5#0") != rows_of(a, "q@bv0.5#0")
    finally:
        a.close()
        b.close()


def test_pinned_shuffle():
    """The shuffle is NumPy's PCG64 raw stream seeded from sha256(method|seed|trial|topic): a pinned
    example, so a change of that stream (or of the seed derivation) cannot go unnoticed."""
    s = evalstore.open(":memory:")
    try:
        qrels_from_dict(s, "p", {"T": {f"d{i:02d}": 1 for i in range(10)}})
        create_subsamples(s, "p", [0.3])
        kept = sorted(d for _, d, _ in rows_of(s, "p@bv0.3#0"))
    finally:
        s.close()
    # the documented rule, restated: keys for the docs in docno order, keep the 3 smallest keys
    digest = hashlib.sha256(b"buckley_voorhees|0|0|T").digest()
    keys = np.random.PCG64(int.from_bytes(digest[:16], "little")).random_raw(10)
    assert kept == sorted(f"d{i:02d}" for i in np.argsort(keys, kind="stable")[:3])
    assert kept == ["d01", "d05", "d08"]


def test_fraction_one_reproduces_parent(sample_store):
    create_subsamples(sample_store, "sample", [1.0], min_nonrel=2)
    assert rows_of(sample_store, "sample@bv1#0") == rows_of(sample_store, "sample")
    metrics = ["AP", "nDCG", "nDCG@10", "P@10", "bpref_R", "rpref_relative2", "AP(judged_only=true)", "Bpref", "infAP"]
    res = evaluate_subsamples(sample_store, "sample", None, metrics, "all", save=False)
    same_scores(res["sample@bv1#0"], res["sample"])


def same_scores(a, b):
    """Same (run, topic, metric) keys and values; DuckDB sums floats in parallel, so the order of
    additions (and the last bits) may differ between two computations of one value."""
    assert [k[:3] for k in a.per_topic] == [k[:3] for k in b.per_topic]
    assert [k[3] for k in a.per_topic] == pytest.approx([k[3] for k in b.per_topic], abs=1e-13)


# --------------------------------------------------------------------------- store behaviour
def test_recreate_conflict_replace_prefix_and_drop(sample_store):
    s = sample_store
    names = create_subsamples(s, "sample", [0.5])
    s.evaluate("sample@bv0.5#0", None, ["AP"])
    before = rows_of(s, "sample@bv0.5#0")
    assert create_subsamples(s, "sample", [0.5]) == names  # same parameters: kept as is
    assert s.sql("SELECT count(*) FROM scores WHERE qrels = 'sample@bv0.5#0'").rows[0][0] == 6 * 8
    with pytest.raises(SubsampleError, match="seed=0"):
        create_subsamples(s, "sample", [0.5], seed=1)
    create_subsamples(s, "sample", [0.5], seed=1, prefix="s1")
    create_subsamples(s, "sample", [0.5], seed=1, replace=True)
    assert rows_of(s, "sample@bv0.5#0") == rows_of(s, "s1@bv0.5#0") != before
    assert s.sql("SELECT count(*) FROM scores WHERE qrels = 'sample@bv0.5#0'").rows[0][0] == 0
    assert s.sql("SELECT seed FROM subsamples WHERE name = 'sample@bv0.5#0'").rows == [(1,)]
    with pytest.raises(SubsampleError, match="itself a subsample"):
        create_subsamples(s, "sample@bv0.5#0", [0.5])
    qrels_from_dict(s, "y@bv0.5#0", {"T": {"d": 1}})
    with pytest.raises(SubsampleError, match="not a subsample"):
        create_subsamples(s, "sample", [0.5], prefix="y")
    with pytest.raises(NotFoundError):
        create_subsamples(s, "nope", [0.5])
    assert drop_subsamples(s, ["s1@bv0.5#0"]) == 1
    assert "s1@bv0.5#0" not in s.qrels_names()
    with pytest.raises(SubsampleError):
        drop_subsamples(s, ["sample"])


def test_resolve_selection(sample_store):
    create_subsamples(sample_store, "sample", [0.5, 0.1], trials=2)
    assert resolve_subsamples(sample_store, "sample", "all") == [
        "sample@bv0.5#0",
        "sample@bv0.5#1",
        "sample@bv0.1#0",
        "sample@bv0.1#1",
    ]
    assert resolve_subsamples(sample_store, "sample", "0.1") == ["sample@bv0.1#0", "sample@bv0.1#1"]
    assert resolve_subsamples(sample_store, "sample", "sample@bv0.5#1,0.1") == [
        "sample@bv0.5#1",
        "sample@bv0.1#0",
        "sample@bv0.1#1",
    ]
    with pytest.raises(NotFoundError, match="fraction"):
        resolve_subsamples(sample_store, "sample", "0.3")
    with pytest.raises(NotFoundError):
        resolve_subsamples(sample_store, "sample", "other")


# --------------------------------------------------------------------------- export
def test_export_trec_qrels_round_trip(sized, tmp_path):
    create_subsamples(sized, "base", [0.3], seed=5)
    path = tmp_path / "sub.qrels"
    n = export_qrels(sized, "base@bv0.3#0", path)
    lines = path.read_text().split("\n")
    assert lines[-1] == "" and len(lines) - 1 == n == len(rows_of(sized, "base@bv0.3#0"))
    assert all(line and not line.startswith("#") and len(line.split(" ")) == 4 for line in lines[:-1])
    assert all(line.split(" ")[1] == "0" for line in lines[:-1])
    sized.ingest_qrels(path, name="back", progress=False)
    assert rows_of(sized, "back") == rows_of(sized, "base@bv0.3#0")
    assert qrels_text(sized, "base@bv0.3#0") == path.read_text()


# --------------------------------------------------------------------------- evaluation
def test_bulk_equals_separate_evaluations(sample_store):
    create_subsamples(sample_store, "sample", [0.7, 0.2], trials=2, min_nonrel=2)
    metrics = ["AP", "nDCG@10", "bpref_N", "RR", "P(judged_only=true)@5"]
    bulk = evaluate_subsamples(sample_store, "sample", None, metrics, "all")
    assert list(bulk) == ["sample", "sample@bv0.7#0", "sample@bv0.7#1", "sample@bv0.2#0", "sample@bv0.2#1"]
    for name, res in bulk.items():
        same_scores(res, sample_store.evaluate(name, None, metrics, save=False))
    # the store holds every (run, qrels set, metric)
    assert sample_store.sql("SELECT count(*) FROM leaderboard").rows[0][0] == 6 * 5 * len(metrics)
    # fewer judgments move the scores
    assert bulk["sample@bv0.2#0"].mean("rerank", "AP") < bulk["sample"].mean("rerank", "AP")


def test_pool_rows_for_subsamples(sample_store):
    """The engine adds the parent's judged docs that a subsample dropped as grade -1 rows
    (pooled but unjudged) to rl_qrels; they are neither judged nor relevant and have no gain."""
    s = sample_store
    create_subsamples(s, "sample", [0.3], min_nonrel=2)
    sub = s.qrels_id("sample@bv0.3#0")
    opts = EvalOptions()
    ranked_list.build(s.con, [sub], [s.run_id("bm25")], ranked_list.Context(), opts)
    pool = set(s.con.execute("SELECT topic, doc FROM rl_qrels WHERE qrels_id = ? AND grade = -1", [sub]).fetchall())
    dropped = {(t, d) for t, d, _ in rows_of(s, "sample")} - {(t, d) for t, d, _ in rows_of(s, "sample@bv0.3#0")}
    assert pool == dropped and len(pool) > 200
    assert (
        s.con.execute(
            "SELECT count(*) FROM rl_qrels WHERE grade = -1 AND (judged OR isrel = 1 OR gain <> 0)"
        ).fetchone()[0]
        == 0
    )
    ranked_list.build(s.con, [sub], [s.run_id("bm25")], ranked_list.Context(), opts.with_pool(False))
    assert s.con.execute("SELECT count(*) FROM rl_qrels WHERE grade < 0").fetchone()[0] == 0


def test_infap_uses_the_parent_pool(sample_store):
    """infAP against a subsample counts the parent's judged docs as the pool (Yilmaz & Aslam): it
    equals trec_eval's infAP on the subsample with the dropped docs written as grade -1; with
    pool=False it is trec_eval's infAP on the subsample alone (pool = its own judgments)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    s = sample_store
    create_subsamples(s, "sample", [0.3], min_nonrel=2)
    name = "sample@bv0.3#0"
    sub = {}
    for t, d, g in rows_of(s, name):
        sub.setdefault(t, {})[d] = g
    pooled = {t: dict(docs) for t, docs in sub.items()}
    for t, d, _ in rows_of(s, "sample"):
        pooled[t].setdefault(d, -1)
    with_pool = s.evaluate(name, None, ["infAP"], save=False)
    without = s.evaluate(name, None, ["infAP"], save=False, pool=False)
    differ = 0
    for run in s.run_names():
        docs = s.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [run]).rows
        r = {}
        for t, d, sc in docs:
            r.setdefault(t, {})[d] = sc
        ref_pool = pytrec_eval.RelevanceEvaluator(pooled, {"infAP"}).evaluate(r)
        ref_sub = pytrec_eval.RelevanceEvaluator(sub, {"infAP"}).evaluate(r)
        for t in r:
            a, b = with_pool.value(run, t, "infAP"), without.value(run, t, "infAP")
            assert a == pytest.approx(ref_pool[t]["infAP"], abs=1e-6), (run, t)
            assert b == pytest.approx(ref_sub[t]["infAP"], abs=1e-6), (run, t)
            differ += abs(a - b) > 1e-6
    assert differ > 10


# --------------------------------------------------------------------------- CLI
def test_cli_create_list_show_export_drop(sample_db, tmp_path):
    r = run_cli(
        "subsample",
        "--qrels",
        "sample",
        "--fractions",
        "0.9,0.7,0.5,0.3,0.1",
        "-k",
        "2",
        "--subsample-seed",
        "4",
        "--min-rel",
        "1",
        "--min-nonrel",
        "2",
        "-f",
        "csv",
        "--db",
        sample_db,
    )
    assert r.exit_code == 0, r.output
    table = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(table) == 10 and table[0]["name"] == "sample@bv0.9#0" and table[0]["seed"] == "4"
    for args in (
        ["subsample", "list", "--qrels", "sample", "-f", "csv", "--db", sample_db],
        ["subsample", "--db", sample_db, "list", "--qrels", "sample", "-f", "csv"],
    ):
        r = run_cli(*args)
        assert r.exit_code == 0 and len(list(csv.DictReader(io.StringIO(r.stdout)))) == 10, args
    r = run_cli("subsample", "show", "sample@bv0.5#1", "-f", "csv", "--db", sample_db)
    assert r.exit_code == 0 and len(list(csv.DictReader(io.StringIO(r.stdout)))) == 8
    out = tmp_path / "x.qrels"
    r = run_cli("subsample", "export", "sample@bv0.5#1", "-o", str(out), "--db", sample_db)
    assert r.exit_code == 0, r.output
    with evalstore.open(sample_db) as s:
        assert out.read_text() == qrels_text(s, "sample@bv0.5#1")
    r = run_cli("subsample", "--qrels", "sample", "--fractions", "2", "--db", sample_db)
    assert r.exit_code != 0 and "outside (0, 1]" in r.stderr
    r = run_cli("subsample", "drop", "--qrels", "sample", "--db", sample_db)  # asks first, and cannot here
    assert r.exit_code == 2 and "--yes" in r.output
    r = run_cli("subsample", "drop", "--qrels", "sample", "--yes", "--db", sample_db)
    assert r.exit_code == 0
    with evalstore.open(sample_db) as s:
        assert s.qrels_names() == ["sample"]


def test_cli_eval_with_subsamples(sample_db):
    assert run_cli("subsample", "--qrels", "sample", "--fractions", "0.5,0.1", "--db", sample_db).exit_code == 0
    r = run_cli(
        "eval", "--qrels", "sample", "--subsamples", "all", "-m", "AP", "-m", "bpref_R", "-f", "csv", "--db", sample_db
    )
    assert r.exit_code == 0, r.output
    table = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(table[0]) == ["run", "qrels", "fraction", "trial", "n_topics", "AP", "bpref_R"]
    assert [row["qrels"] for row in table[::6]] == ["sample", "sample@bv0.5#0", "sample@bv0.1#0"]
    assert table[0]["fraction"] == "1.0" and table[0]["trial"] == "" and table[6]["trial"] == "0"
    with evalstore.open(sample_db) as s:
        lb = dict(
            ((run, q), m)
            for run, q, m in s.sql("SELECT run, qrels, mean FROM leaderboard WHERE metric LIKE 'bpref_R%'").rows
        )
    assert all(float(row["bpref_R"]) == pytest.approx(lb[(row["run"], row["qrels"])]) for row in table)
    r = run_cli("eval", "--qrels", "sample", "--subsamples", "0.1", "-m", "AP", "-f", "csv", "-p", "--db", sample_db)
    assert r.exit_code == 0 and len(r.stdout.strip().splitlines()) == 1 + 2 * 6 * 8
    r = run_cli("eval", "--qrels", "sample", "--subsamples", "all", "-m", "AP", "-f", "trec", "--db", sample_db)
    assert r.exit_code != 0


def test_cli_subsample_options_spelled_as_in_robustness(sample_db):
    """--subsample-trials (-k) and --subsample-seed, as in `meta robustness`; the old --trials and
    --seed still work (hidden) and make the same subsamples."""
    args = ["subsample", "-q", "sample", "--fractions", "0.5", "-f", "csv", "--db", sample_db]
    new = run_cli(*args, "--subsample-trials", "2", "--subsample-seed", "7", "--prefix", "a")
    old = run_cli(*args, "--trials", "2", "--seed", "7", "--prefix", "b")
    assert new.exit_code == 0 and old.exit_code == 0, (new.output, old.output)
    assert "now --subsample-trials (-k) and --subsample-seed" in old.stderr
    with evalstore.open(sample_db) as s:
        q = "SELECT topic, doc, grade FROM qrels WHERE qrels = ? ORDER BY ALL"
        for trial in (0, 1):
            assert s.sql(q, [f"a@bv0.5#{trial}"]).rows == s.sql(q, [f"b@bv0.5#{trial}"]).rows
        assert s.sql("SELECT DISTINCT seed FROM subsamples").rows == [(7,)]


def test_trials_are_made_in_blocks_with_the_same_subsamples(tmp_path, monkeypatch):
    """Issue 39.10: `subsample -k 100000` ran out of memory (every trial staged at once); the trials
    are made in blocks of bounded rows, and a block size changes no subsample."""
    from evalstore.subsample import create

    def made(path, block_rows):
        monkeypatch.setattr(create, "BLOCK_ROWS", block_rows)
        with evalstore.open(path) as s:
            s.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
            names = create_subsamples(s, "q", "0.7,0.3", trials=7, seed=5)
            rows = s.sql("SELECT qrels, topic, doc, grade FROM qrels WHERE qrels <> 'q' ORDER BY ALL").rows
            meta = s.sql("SELECT name, n_judged, sha256 FROM qrels_sets WHERE name <> 'q' ORDER BY name").rows
        return names, rows, meta

    one = made(tmp_path / "one.duckdb", 10**9)
    many = made(tmp_path / "many.duckdb", 1)  # a block per trial
    assert one == many and len(one[0]) == 14 and one[0][:2] == ["q@bv0.7#0", "q@bv0.7#1"]
    monkeypatch.undo()
    assert create.trial_blocks(100_000, 5 * 480) == [(t, min(100_000, t + 833)) for t in range(0, 100_000, 833)]

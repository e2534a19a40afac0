"""`evalstore repro` (Breuer et al., SIGIR 2020): hand-checked values on a tiny fixture, the
conventions (ranking order, missing topics, lists of different lengths), storage and the CLI.
The side-by-side agreement with repro_eval 0.5.0 on TREC DL runs is in test_repro_dl.py."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from support import run_cli

import evalstore
from evalstore.errors import MetaError
from evalstore.repro import orderings, reproducibility

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 0\n"
# run -> {topic: docs in rank order}; scores descend in file order
RUNS = {
    "B": {"q1": "b a c", "q2": "y x"},
    "A": {"q1": "a b c", "q2": "x y"},
    "RB": {"q1": "b c a", "q2": "x y"},
    "RA": {"q1": "a c b", "q2": "x y"},
}
P = 0.8
DEN3 = 1 + P + P * P  # RBO's normaliser with cut 3


def _write_run(path, name, topics):
    lines = []
    for t, docs in topics.items():
        for i, d in enumerate(docs.split()):
            lines.append(f"{t} Q0 {d} {i + 1} {10 - i} {name}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def tiny(store, tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text(QRELS)
    store.ingest_qrels(q, name="q", progress=False)
    store.ingest_run([_write_run(tmp_path / f"{n}.txt", n, t) for n, t in RUNS.items()], progress=False)
    return store


def test_hand_checked_values(tiny):
    r = reproducibility(tiny, "q", "B", "A", "RB", "RA", ["RR"], cut=3, rbo_p=P)
    # RR per topic: B (1/2, 1/2), A (1, 1), RB (1/2, 1), RA (1, 1)
    assert r.arp["baseline"]["RR"] == pytest.approx(0.5)
    assert r.arp["rep_baseline"]["RR"] == pytest.approx(0.75)
    assert r.er["RR"] == pytest.approx(0.25 / 0.5)  # mean(RA - RB) / mean(A - B)
    assert r.dri["RR"] == pytest.approx((1 - 0.5) / 0.5 - (1 - 0.75) / 0.75)
    assert r.rmse["baseline"]["RR"] == pytest.approx(math.sqrt((0 + 0.25) / 2))
    assert r.nrmse["baseline"]["RR"] == pytest.approx(math.sqrt(0.125) / 0.5)
    assert r.rmse["advanced"]["RR"] == 0 and r.nrmse["advanced"]["RR"] == 0
    # paired t on differences (0, -1/2): t = -1 with 1 df, p = 0.5; identical scores: p = 1
    assert r.ttest["baseline"]["RR"] == pytest.approx(0.5)
    assert r.ttest["advanced"]["RR"] == 1.0
    # KTU: q1 b,a,c vs b,c,a: every pair discordant (-1); q2 y,x vs x,y: -1
    assert r.per_topic["ktu"]["baseline"] == {"q1": pytest.approx(-1), "q2": pytest.approx(-1)}
    # a,b,c vs a,c,b: (a,b)+ (a,c)+ (b,c)- -> 1/3; identical lists: 1
    assert r.per_topic["ktu"]["advanced"] == {"q1": pytest.approx(1 / 3), "q2": pytest.approx(1.0)}
    assert r.ktu == {"baseline": pytest.approx(-1), "advanced": pytest.approx(2 / 3)}
    # RBO to depth 3: sum_d p^(d-1) X_d / d / (1 + p + p^2)
    rbo_b = {"q1": (1 + P * 1 / 2 + P * P * 3 / 3) / DEN3, "q2": (0 + P * 2 / 2 + P * P * 2 / 3) / DEN3}
    rbo_a = {"q1": (1 + P * 1 / 2 + P * P * 3 / 3) / DEN3, "q2": (1 + P * 2 / 2 + P * P * 2 / 3) / DEN3}
    assert r.per_topic["rbo"]["baseline"] == pytest.approx(rbo_b)
    assert r.per_topic["rbo"]["advanced"] == pytest.approx(rbo_a)
    assert r.rbo["baseline"] == pytest.approx(np.mean(list(rbo_b.values())))
    assert set(r.to_dict()) == {"ktu", "rbo", "rmse", "nrmse", "er", "dri", "ttest"}


def _rbo_loop(run, ideal, p, depth):
    """RBO as its definition reads (a loop over depths), to check the vectorised form."""
    score = norm = 0.0
    for i in range(depth):
        x = len(set(run[: i + 1]) & set(ideal[: i + 1]))
        score += p**i * x / (i + 1)
        norm += p**i
    return score / norm


def _ktu_pairs(o, r):
    n = min(len(o), len(r))
    s = sum(
        np.sign((o[i] > o[j]) - (o[i] < o[j])) * np.sign((r[i] > r[j]) - (r[i] < r[j]))
        for i in range(n)
        for j in range(i + 1, n)
    )
    return s / (n * (n - 1) / 2)


def test_ktu_and_rbo_against_their_definitions():
    rng = np.random.default_rng(7)
    pool = np.array([f"D{i:03d}" for i in range(60)])
    for _ in range(20):
        o = rng.permutation(pool)[: rng.integers(2, 40)]
        r = rng.permutation(pool)[: rng.integers(2, 40)]
        tau, n = orderings.ktu(o, r)
        assert n == min(len(o), len(r))
        assert tau == pytest.approx(_ktu_pairs(list(o), list(r)), abs=1e-12)
        for p, depth in ((0.8, 50), (0.95, 30), (0.5, 10)):
            assert orderings.rbo(o, r, p, depth) == pytest.approx(_rbo_loop(list(r), list(o), p, depth), abs=1e-12)


def test_orders_trec_eval_and_repro_eval(store, tmp_path):
    # a file not sorted by score: trec_eval sorts (score desc, docno desc); repro_eval keeps file order
    # and sorts only consecutive equal scores by docno desc
    path = tmp_path / "u.txt"
    path.write_text("q1 Q0 c 1 1.0 u\nq1 Q0 a 2 3.0 u\nq1 Q0 b 3 3.0 u\nq1 Q0 d 4 0.5 u\nq1 Q0 e 5 0.5 u\n")
    store.ingest_run(path, name="u", progress=False)
    te = orderings.rankings(store, ["u"], 1000, "trec_eval")["u"].docs["q1"]
    rp = orderings.rankings(store, ["u"], 1000, "repro_eval")["u"].docs["q1"]
    assert list(te) == ["b", "a", "c", "e", "d"]
    assert list(rp) == ["c", "b", "a", "e", "d"]
    assert list(orderings.rankings(store, ["u"], 2, "repro_eval")["u"].docs["q1"]) == ["c", "b"]
    with pytest.raises(MetaError, match="ranking order"):
        orderings.rankings(store, ["u"], 10, "file")


def test_missing_topics_rule(tiny, tmp_path):
    tiny.ingest_run(_write_run(tmp_path / "RB1.txt", "RB1", {"q1": "b c a"}), progress=False)
    with pytest.raises(MetaError, match="no RR score on some topics|do not have the same topics"):
        reproducibility(tiny, "q", "B", "A", "RB1", "RA", ["RR"], save=False)
    r = reproducibility(tiny, "q", "B", "A", "RB1", "RA", ["RR"], missing="drop_topics", save=False, cut=3)
    assert r.topics["scores"] == ["q1"] and r.topics["rankings_baseline"] == ["q1"]
    assert r.topics["rankings_advanced"] == ["q1", "q2"]  # both advanced rankings have q2
    assert r.ktu["baseline"] == pytest.approx(-1)
    assert any("left out" in n for n in r.notes)
    z = reproducibility(tiny, "q", "B", "A", "RB1", "RA", ["RR"], missing="zero", save=False, cut=3)
    assert z.per_topic["ktu"]["baseline"]["q2"] == 0 and z.per_topic["rbo"]["baseline"]["q2"] == 0
    assert z.arp["rep_baseline"]["RR"] == pytest.approx((0.5 + 0) / 2)  # q2 scored 0
    with pytest.raises(MetaError, match="drop_runs"):
        reproducibility(tiny, "q", "B", "A", "RB1", "RA", ["RR"], missing="drop-runs", save=False)


def test_lists_of_different_lengths_compare_the_common_depth(tiny, tmp_path):
    tiny.ingest_run(_write_run(tmp_path / "S.txt", "S", {"q1": "b a", "q2": "y x"}), progress=False)
    r = reproducibility(tiny, "q", "B", "A", "S", "RA", ["RR"], save=False)
    assert r.per_topic["ktu"]["baseline"]["q1"] == pytest.approx(1.0)  # b,a vs b,a
    assert any("different lengths" in n for n in r.notes)


def test_replicability_has_er_dri_and_unpaired_tests(tiny, tmp_path):
    q2 = tmp_path / "q2.txt"
    q2.write_text("q1 0 a 1\nq2 0 y 1\nq3 0 z 1\n")
    tiny.ingest_qrels(q2, name="q2", progress=False)
    r = reproducibility(tiny, "q", "B", "A", "RB", "RA", ["RR"], rep_qrels="q2", save=False)
    assert r.kind == "replicability" and set(r.to_dict()) == {"er", "dri", "ttest"}
    assert r.ktu is None and r.rmse is None
    # RR on q2: RB (q1 b,c,a -> 1/3; q2 x,y -> 1/2), RA (q1 a -> 1; q2 -> 1/2)
    rb, ra = np.array([1 / 3, 1 / 2]), np.array([1.0, 1 / 2])
    assert r.er["RR"] == pytest.approx(np.mean(ra - rb) / 0.5)
    from scipy.stats import ttest_ind

    assert r.ttest["baseline"]["RR"] == pytest.approx(ttest_ind([0.5, 0.5], rb).pvalue)


def test_stored_and_dropped_with_its_runs(tiny):
    r = reproducibility(tiny, "q", "B", "A", "RB", "RA", ["RR", "P@1"], cut=3)
    aid = r.analysis_id
    (kind,) = tiny.con.execute("SELECT kind FROM meta_runs WHERE analysis_id = ?", [aid]).fetchone()
    assert kind == "repro"
    rows = tiny.con.execute(
        "SELECT measure, side, metric, value FROM meta_repro WHERE analysis_id = ? ORDER BY ALL", [aid]
    ).fetchall()
    got = {(m, s, k): v for m, s, k, v in rows}
    assert got[("er", None, "RR")] == pytest.approx(0.5)
    assert got[("ktu", "advanced", None)] == pytest.approx(2 / 3)
    n_topics = tiny.con.execute("SELECT count(*) FROM meta_repro_topics WHERE analysis_id = ?", [aid]).fetchone()[0]
    assert n_topics == 2 * 2 * 2  # ktu and rbo, two sides, two topics
    plan = tiny.drop_runs(["RA"])
    assert aid in plan.analyses
    assert tiny.con.execute("SELECT count(*) FROM meta_repro WHERE analysis_id = ?", [aid]).fetchone()[0] == 0


def test_facade(tiny):
    r = tiny.repro("q", "B", "A", "RB", "RA", ["RR"], cut=3, save=False)
    assert r.er["RR"] == pytest.approx(0.5) and r.analysis_id is None


# --------------------------------------------------------------------------- CLI
@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.duckdb"
    with evalstore.open(path) as s:
        q = tmp_path / "qrels.txt"
        q.write_text(QRELS)
        s.ingest_qrels(q, name="q", progress=False)
        s.ingest_run([_write_run(tmp_path / f"{n}.txt", n, t) for n, t in RUNS.items()], progress=False)
    return path


def _run(db, *args):
    return run_cli(*args, "--db", str(db))


REPRO = ["repro", "-q", "q", "-b", "B", "-a", "A", "--rep-baseline", "RB", "--rep-advanced", "RA", "-m", "RR"]


def test_cli_json_has_repro_evals_shape(db, tmp_path):
    res = _run(db, *REPRO, "-m", "P@1", "--cut", "3", "--format", "json", "--plot", str(tmp_path / "er.png"))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == {"ktu", "rbo", "rmse", "nrmse", "er", "dri", "ttest"}
    assert set(doc["rmse"]) == {"baseline", "advanced"} and set(doc["rmse"]["baseline"]) == {"RR", "P@1"}
    assert doc["er"]["RR"] == pytest.approx(0.5)
    assert doc["ktu"]["advanced"] == pytest.approx(2 / 3)
    assert (tmp_path / "er.png").stat().st_size > 0


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "csv"])
def test_cli_table_formats(db, fmt):
    res = _run(db, *REPRO, "--format", fmt, "--no-save")
    assert res.exit_code == 0, res.output
    assert "KTU" in res.stdout and "ΔRI" in res.stdout or "RI" in res.stdout


def test_cli_per_topic(db):
    res = _run(db, *REPRO, "--per-topic", "--format", "csv", "--cut", "3", "--no-save")
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    assert lines[0] == "topic,ktu_baseline,ktu_advanced,rbo_baseline,rbo_advanced"
    assert lines[1].startswith("q1,-1.0,")


@pytest.mark.parametrize(
    "extra",
    [
        ["--rbo-p", "1.5"],
        ["--cut", "0"],
        ["--order", "file"],
        ["--missing", "drop-runs"],
        ["--format", "yaml"],
        ["--plot", "x.pdf"],
    ],
)
def test_cli_bad_options_exit_2_and_leave_the_store_alone(db, extra):
    before = db.read_bytes()
    res = _run(db, *REPRO, *extra)
    assert res.exit_code == 2, res.output
    assert db.read_bytes() == before


def test_cli_unknown_run_is_a_message(db):
    import subprocess
    import sys

    args = ["repro", "-q", "q", "-b", "B", "-a", "A", "--rep-baseline", "nope", "--rep-advanced", "RA", "-m", "RR"]
    res = subprocess.run(
        [sys.executable, "-m", "evalstore", *args, "--db", str(db)], capture_output=True, text=True, check=False
    )
    assert res.returncode != 0 and "no run named 'nope'" in res.stderr and "Traceback" not in res.stderr

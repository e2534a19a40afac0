"""What compare and meta tests tell the user besides the table: the note naming the B that a
Monte-Carlo p-value needs to pass the adjusted threshold, on stderr whatever the format and
destination; p-values as <0.001 in terminal tables; plot bars in their table's order."""

from __future__ import annotations

import json

import numpy as np
from support import SAMPLE, run_cli

import evalstore
from evalstore import meta
from evalstore.comparison import result as render
from evalstore.output import meta_tables, plots
from evalstore.stats.significance import adjust, min_trials


def _passes(B: int, m: int, method: str, alpha: float) -> bool:
    """Does the smallest Monte-Carlo p-value 1/(B+1), as the best of m comparisons, pass?"""
    p = np.ones(m)
    p[0] = 1.0 / (B + 1)
    return bool(adjust(p, method if m > 1 else "none")[0] < alpha)


def test_min_trials_is_the_smallest_b_that_can_pass():
    # floor(m / alpha) was one short where alpha / m is not exact in binary: 0.01 and 35 comparisons
    # need B + 1 > 3500, i.e. B = 3500 (1/3500 * 35 = 0.01 is not < 0.01), not 3499
    assert min_trials(0.01, 35, "holm") == 3500
    assert min_trials(0.05, 1, "none") == 20  # 1/21 < 0.05 <= 1/20
    assert min_trials(0.05, 2, "bonferroni") == 40  # 2/41 < 0.05 <= 2/40
    # BY: the best of 2 passes when 1/(B+1) * 2 * (1 + 1/2) = 3/(B+1) < 0.05, i.e. B >= 60; of 4 when
    # 1/(B+1) * 4 * (1 + 1/2 + 1/3 + 1/4) = 8.33/(B+1) < 0.05, i.e. B + 1 > 166.7
    assert min_trials(0.05, 2, "by") == 60 and min_trials(0.05, 4, "by") == 166
    for alpha in (0.001, 0.01, 0.05, 0.1):
        for m in (1, 2, 3, 7, 35, 55, 70, 435):
            for method in ("none", "holm", "bonferroni", "bh", "by"):
                need = min_trials(alpha, m, method)
                assert _passes(need, m, method, alpha) and not _passes(need - 1, m, method, alpha), (alpha, m, method)


def test_compare_names_the_b_needed_on_stderr_in_every_format(sample_db, tmp_path):
    base = ["compare", "--db", sample_db, "-q", "sample", "-b", "bm25", "-m", "AP", "--test", "randomization"]
    base += ["--adjust", "holm", "-B", "20", "--no-save"]
    need = min_trials(0.05, 5, "holm")  # 5 runs against the baseline
    assert need == 100
    note = f"use --trials {need} or more"
    for extra in ([], ["-f", "csv"], ["-f", "json"], ["-f", "markdown"], ["-o", tmp_path / "c.csv"],
                  ["-o", tmp_path / "c.tex"], ["-o", tmp_path / "c.txt"]):  # fmt: skip
        r = run_cli(*base, *extra)
        assert r.exit_code == 0, r.output
        assert note in r.stderr and note not in r.stdout, extra
    rows = json.loads(run_cli(*base, "-f", "json").stdout)
    assert len(rows) == 5 and min(x["p_value"] for x in rows) >= 1 / 21
    # a text file keeps its legend (test, B, seed), as the terminal shows it
    assert "paired randomisation test; B = 20, seed 0" in (tmp_path / "c.txt").read_text()
    r = run_cli(*base[:-1], "-f", "csv", "--effects", "-B", "100")
    assert note not in r.stderr and "(meta_runs, meta_pair_tests, meta_effects)" in r.stderr


def test_meta_tests_names_the_b_needed_and_prints_small_p_values(sample_db, tmp_path):
    base = ["meta", "tests", "--db", sample_db, "-q", "sample", "-m", "AP", "--adjust", "holm", "-B", "50", "--no-save"]
    need = min_trials(0.05, 15, "holm")  # 6 runs: 15 pairs
    note = f"over 15 pairs; use --trials {need} or more"
    r = run_cli(*base)
    assert r.exit_code == 0, r.output
    assert note in r.stderr and "randomisation and bootstrap: with B = 50" in r.stderr
    r = run_cli(*base, "-f", "json", "-o", tmp_path / "t.json")
    assert r.exit_code == 0 and note in r.stderr
    assert run_cli(*base, "-t", "t", "-t", "wilcoxon").stderr.count("--trials") == 0  # no Monte-Carlo test
    with evalstore.open(sample_db) as s:
        an = meta.tests(s, "sample", ["AP"], tests=["t"], save=False)
    table = meta_tables.tests(an, pairs=True, paper=True)
    plain = meta_tables.tests(an, pairs=True, paper=False)
    for shown, value in zip((r[-1] for r in table.rows), (r[-1] for r in plain.rows)):
        assert isinstance(value, float)
        assert shown == ("<0.001" if value < 0.001 else f"{value:.3f}")


def test_discpower_and_swap_bars_follow_their_tables(sample_db, tmp_path, monkeypatch):
    with evalstore.open(sample_db) as s:
        metrics = ["P@5", "AP", "nDCG@10", "RR"]
        dp = meta.discpower(s, "sample", metrics, trials=200, save=False)
        sw = meta.swap(s, "sample", metrics, trials=50, save=False)
    from evalstore.output.figures import analyses

    assert analyses.discpower(dp).panels[1].labels == [r[0] for r in meta_tables.discpower(dp).rows]
    plots.plot_discpower(dp, tmp_path / "d.png")
    import matplotlib.axes  # imported when a test draws, not at collection

    ticks: list[list[str]] = []
    original = matplotlib.axes.Axes.set_yticks
    monkeypatch.setattr(
        matplotlib.axes.Axes, "set_yticks", lambda self, y, labels=None, **k: (ticks.append(list(labels or [])),
                                                                              original(self, y, labels, **k))[1]
    )  # fmt: skip
    plots.plot_swap(sw, tmp_path / "s.png")
    assert ticks[-1] == [r[0] for r in meta_tables.swap(sw).rows]


def test_runs_tied_for_the_best_mean_are_all_bold(sample_db):
    with evalstore.open(sample_db) as s:
        s.ingest_run(SAMPLE / "runs" / "dense.txt", name="dense_copy", progress=False)
        cmp = s.compare("sample", "bm25", ["dense", "dense_copy", "random"], ["AP"], save=False)
    assert cmp.means[1, 0] == cmp.means[2, 0] == cmp.means[:, 0].max()
    best = f"{cmp.means[1, 0]:.4f}"
    assert render.markdown(cmp).count(f"**{best}**") == 2
    assert render.latex(cmp).count(f"\\textbf{{{best}}}") == 2


def test_what_a_missing_topic_policy_did_is_said(sample_db, tmp_path):
    lines = (SAMPLE / "runs" / "dense.txt").read_text().splitlines(keepends=True)
    first = lines[0].split()[0]
    partial = tmp_path / "partial.txt"
    partial.write_text("".join(x for x in lines if x.split()[0] != first))  # one topic fewer
    with evalstore.open(sample_db) as s:
        s.ingest_run(partial, name="partial", progress=False)
    base = ["compare", "--db", sample_db, "-q", "sample", "-b", "bm25", "-m", "AP", "-m", "P@5", "--no-save"]
    r = run_cli(*base, "--missing", "drop-runs", "-f", "csv")
    assert r.exit_code == 0 and "left out (not scored on every topic): 1 run(s): partial" in r.stderr
    assert "partial" not in r.stdout
    r = run_cli(*base, "-r", "partial", "--missing", "drop-topics", "-o", tmp_path / "c.md")
    assert r.exit_code == 0 and f"left out (not every run scored): 1 topic(s): {first}" in r.stderr
    r = run_cli(
        "meta", "kendall", "--db", sample_db, "-q", "sample", "-m", "AP", "-m", "P@5", "--missing", "zero", "--no-save"
    )
    assert r.exit_code == 0 and "scored 0 where a run has no score: AP: 1 cell(s), P@5: 1 cell(s)" in r.stderr

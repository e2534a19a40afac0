"""Issue 32.8 (figures): every --plot draws PNG or SVG by its extension, and --plot-data writes the
figure's data (the values drawn, in the order drawn) as a table beside it (CSV, TSV, JSON, Parquet)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from support import SAMPLE_REPRO

import evalstore
from evalstore import meta
from evalstore.output import figure_data, plots

# every command that draws a figure, with what it needs (the sample store's qrels set is the default)
FIGURES = {
    "eval": ("eval", "-m", "AP", "-m", "P@5"),
    "compare": ("compare", "-b", "bm25", "-m", "AP", "-m", "nDCG@10", "--no-save"),
    "repro": (*SAMPLE_REPRO, "-m", "AP", "-m", "nDCG@10", "--no-save"),
    "kendall": ("meta", "kendall", "-m", "AP", "-m", "nDCG@10", "-m", "P@5", "--no-save"),
    "swap": ("meta", "swap", "-m", "AP", "-m", "nDCG@10", "-B", "50", "--no-save"),
    "discpower": ("meta", "discpower", "-m", "AP", "-m", "nDCG@10", "-B", "100", "--no-save"),
    "tests": ("meta", "tests", "-m", "AP", "-t", "t", "-t", "wilcoxon", "--no-save"),
    "robustness": ("meta", "robustness", "-m", "AP", "--fractions", "0.5", "-B", "50", "--no-save"),
}
HEADS = {
    "eval": ["metric", "run", "position", "topic", "value"],
    "compare": ["metric", "run", "position", "topic", "baseline", "run_value", "diff", "significant"],
    "repro": ["metric", "er", "dri"],
    "kendall": ["column_a", "column_b", "stat", "value"],
    "swap": ["panel", "column", "rank", "bin_lo", "bin_hi", "comparisons", "swap_rate", "share", "abs_diff"],
    "discpower": ["panel", "column", "rank", "asl", "n_significant", "n_pairs", "disc_power", "est_diff"],
    "tests": ["column", "test", "n_significant", "n_pairs", "disc_power"],
    "robustness": ["metric", "fraction", "tau_mean", "disc_power", "accuracy", "g_mean"],
}


@pytest.mark.parametrize("kind", list(FIGURES))
def test_every_figure_as_svg_and_png_with_its_data(cli, sample_db, tmp_path, kind):
    args = FIGURES[kind]
    svg, png, data = tmp_path / "f.svg", tmp_path / "f.png", tmp_path / "f.csv"
    code, _, err = cli(*args, "--plot", svg, "--plot-data", data, "--db", sample_db)
    assert code == 0, err
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text and "<text" in text  # text kept as text: restylable
    assert f"wrote {svg}" in err and f"wrote {data}" in err
    rows = list(csv.reader(io.StringIO(data.read_text())))
    assert rows[0] == HEADS[kind] and len(rows) > 1
    code, _, err = cli(*args, "--plot", png, "--db", sample_db)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the data alone, in another format
    code, _, err = cli(*args, "--plot-data", tmp_path / "f.json", "--db", sample_db)
    assert code == 0, err
    assert list(json.loads((tmp_path / "f.json").read_text())[0]) == HEADS[kind]


def test_paths_are_checked_before_any_work(cli, sample_db, tmp_path):
    code, _, err = cli(*FIGURES["compare"], "--plot", tmp_path / "f.pdf", "--db", sample_db)
    assert code == 2 and "Invalid value for --plot" in err and "must end in .png or .svg" in err
    code, _, err = cli(*FIGURES["compare"], "--plot-data", tmp_path / "f.txt", "--db", sample_db)
    assert code == 2 and "Invalid value for --plot-data" in err and ".csv" in err
    code, _, err = cli(*FIGURES["kendall"], "--plot-data", tmp_path / "no" / "f.csv", "--db", sample_db)
    assert code == 2 and "--plot-data" in err and "does not exist" in err
    with evalstore.open(sample_db) as s:
        assert s.sql("SELECT count(*) FROM meta_runs").rows[0][0] == 0  # nothing ran
    assert not list(tmp_path.glob("f.*"))


def test_svg_is_the_same_file_for_the_same_figure(sample_db, tmp_path):
    with evalstore.open(sample_db) as s:
        cmp = s.compare("sample", "bm25", None, ["AP"], save=False)
    plots.plot_compare(cmp, tmp_path / "a.svg")
    plots.plot_compare(cmp, tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert "rerank (better)" in (tmp_path / "a.svg").read_text()


def _drawn_lines(monkeypatch) -> list[tuple[str, np.ndarray]]:
    import matplotlib.axes  # imported when a test draws, not at collection

    drawn: list[tuple[str, np.ndarray]] = []
    original = matplotlib.axes.Axes.plot

    def plot(self, *args, **kwargs):
        drawn.append((kwargs.get("label", ""), np.asarray(args[1], dtype=float)))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", plot)
    return drawn


def test_compare_data_is_what_the_lines_draw(sample_db, tmp_path, monkeypatch):
    with evalstore.open(sample_db) as s:
        cmp = s.compare("sample", "bm25", None, ["AP", "nDCG@10"], save=False)
    drawn = _drawn_lines(monkeypatch)
    plots.plot_compare(cmp, tmp_path / "c.png")
    table = figure_data.compare(cmp)
    k = 0
    for metric in cmp.metrics:
        for run in cmp.runs[1:]:
            label, y = drawn[k]
            rows = [r for r in table.rows if r[0] == metric and r[1] == run]
            assert [r[2] for r in rows] == list(range(1, len(rows) + 1))
            assert np.array_equal(y, [r[6] for r in rows]), (metric, run)
            assert label == run + (f" ({rows[0][7]})" if rows[0][7] else "")
            k += 1
    # the significance column says what the table's marks say
    assert {r[1]: r[7] for r in table.rows if r[0] == "AP"} == {
        "bm25_rm3": "", "dense": "", "hybrid": "better", "random": "worse", "rerank": "better"
    }  # fmt: skip


def test_scores_kendall_and_er_dri_data_is_what_is_drawn(sample_db, tmp_path, monkeypatch):
    with evalstore.open(sample_db) as s:
        result = s.evaluate("sample", metrics=["AP", "P@5"], save=False)
        an = meta.kendall(s, "sample", ["AP", "nDCG@10", "P@5"], save=False)
        r = s.repro("sample", "bm25", "dense", "bm25_rm3", "hybrid", ["AP", "nDCG@10"], save=False)
    import matplotlib.axes

    boxes: list[list[list[float]]] = []
    original_box = matplotlib.axes.Axes.boxplot
    monkeypatch.setattr(
        matplotlib.axes.Axes, "boxplot", lambda self, x, **k: (boxes.append(x), original_box(self, x, **k))[1]
    )
    plots.plot_scores(result, tmp_path / "s.png")
    table = figure_data.scores(result)
    for metric, drawn in zip(["AP", "P@5"], boxes):
        runs = list(dict.fromkeys(row[1] for row in table.rows if row[0] == metric))
        assert drawn == [[row[4] for row in table.rows if row[0] == metric and row[1] == run] for run in runs]
    assert runs[0] == "rerank"  # by the mean of the first metric, best first
    images: list[np.ndarray] = []
    original_im = matplotlib.axes.Axes.imshow
    monkeypatch.setattr(
        matplotlib.axes.Axes, "imshow", lambda self, M, **k: (images.append(M), original_im(self, M, **k))[1]
    )
    plots.plot_kendall(an, tmp_path / "k.png")
    cells = figure_data.kendall(an).rows
    assert np.array_equal(images[0].ravel(), [c[3] for c in cells]) and len(cells) == 9
    points: list[tuple[np.ndarray, np.ndarray]] = []
    original_sc = matplotlib.axes.Axes.scatter
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "scatter",
        lambda self, x, y, **k: (points.append((x, y)), original_sc(self, x, y, **k))[1],
    )

    plots.plot_er_dri(r, tmp_path / "r.png")
    assert np.array_equal(points[0][0], [row[1] for row in figure_data.er_dri(r).rows])
    assert np.array_equal(points[0][1], [row[2] for row in figure_data.er_dri(r).rows])

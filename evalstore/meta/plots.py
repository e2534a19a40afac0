"""Figures of evaluation and meta-evaluation results (matplotlib, Agg backend: no display needed),
as PNG or SVG by the file's extension (SVG: text kept as text, so it can be restyled). Each figure
draws from its data table (:mod:`evalstore.report.figure_data`, ``--plot-data``): the same values,
in the same order.

* :func:`plot_kendall`: heat map of Kendall's tau between columns (Sakai IPSJ 2007 Table 2 as a picture);
* :func:`plot_swap`: swap rate per difference bin, one line per column, the 5 % line (Sakai IPSJ 2007
  Fig. 4's output), and the share of comparisons meeting the required difference (Sakai IPSJ 2007 Fig. 9);
* :func:`plot_discpower`: discriminative power per column (Sakai IPSJ 2007 Fig. 10, Sakai SIGIR 2007 Table 3);
* :func:`plot_tests`: discriminative power per test and column;
* :func:`plot_robustness`: Kendall's tau, discriminative power, accuracy and g-mean against the
  share of judgments kept (Sakai SIGIR 2007 Figs. 2-3, Bompada et al. 2007 Figs. 1-2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..report import figure_data, figures
from ..report.matplotlib_backend import draw_lines, pyplot, save_figure

#: The file formats of a figure, by extension.
FIGURE_EXTENSIONS = (".png", ".svg")


def _short(labels: Sequence[str], qrels: Sequence[str] | None = None) -> list[str]:
    if qrels is not None and len(set(qrels)) > 1:
        return [f"{lab} [{q}]" for lab, q in zip(labels, qrels)]
    return list(labels)


def plot_kendall(analysis, path, stat: str = "tau") -> str:
    plt = pyplot()
    labels, M = figure_data.kendall_matrix(analysis, stat)
    k = len(labels)
    fig, ax = plt.subplots(figsize=(1.2 * k + 3, 1.0 * k + 2))
    im = ax.imshow(M, vmin=min(0.0, float(np.nanmin(M))), vmax=1.0, cmap="viridis")
    ax.set_xticks(range(k), labels, rotation=45, ha="right")
    ax.set_yticks(range(k), labels)
    for i in range(k):
        for j in range(k):
            if i != j and np.isfinite(M[i, j]):
                ax.text(
                    j,
                    i,
                    f"{M[i, j]:.3f}",
                    ha="center",
                    va="center",
                    color="white" if M[i, j] < 0.7 else "black",
                    fontsize=9,
                )
    fig.colorbar(im, ax=ax, label=f"Kendall's {stat}" if stat.startswith("tau") else stat)
    qrels = ", ".join(dict.fromkeys(analysis.results["qrels"]))
    ax.set_title(
        f"Rank correlation between system rankings ({qrels}, {len(analysis.inputs['runs'])} runs)", fontsize=10
    )
    return save_figure(fig, path)


def plot_swap(analysis, path) -> str:
    plt = pyplot()
    results = analysis.results["swap"]
    labels = _short(analysis.results["labels"], [r["qrels"] for r in analysis.rows("meta_swap")])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    columns = [
        (lab, [(float(e[0]), int(n), float(rate)) for e, n, rate in zip(r.edges(), r.counts, r.rates)])
        for lab, r in zip(labels, results)
    ]
    qrels = analysis.rows("meta_swap")[0]["qrels"]
    model = figures.swap_rates(columns, results[0].max_rate)
    draw_lines(ax, model, f"{model.title}, {qrels} (B = {results[0].B}; Sakai IPSJ 2007 Fig. 4)")
    # the bars in the table's order (report.meta_tables.swap: by share, largest first)
    order = figure_data.swap_bars(analysis)
    bars = [results[i] for i in order]
    share = [100 * (r.share if np.isfinite(r.share) else 0.0) for r in bars]
    y = np.arange(len(bars))
    ax2.barh(y, share, color="tab:blue")
    ax2.set_yticks(y, [labels[i] for i in order], fontsize=8)
    ax2.invert_yaxis()
    for yi, (s, r) in enumerate(zip(share, bars)):
        txt = f"{s:.2g}% (diff {r.abs_diff:.2f})" if np.isfinite(r.abs_diff) else "no bin <= 5%"
        ax2.text(s, yi, " " + txt, va="center", fontsize=8)
    ax2.set_xlim(0, max(share + [1.0]) * 1.45)
    ax2.set_xlabel("% comparisons satisfying the required difference")
    ax2.set_title("Discriminative power (swap method, Sakai IPSJ 2007)")
    return save_figure(fig, path)


def _bars(ax, labels, values, texts, xlabel, title):
    y = np.arange(len(labels))
    ax.barh(y, values, color="tab:green")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    for yi, (v, t) in enumerate(zip(values, texts)):
        ax.text(v, yi, " " + t, va="center", fontsize=8)
    ax.set_xlim(0, max(list(values) + [1.0]) * 1.35)
    ax.set_xlabel(xlabel)
    ax.set_title(title)


def plot_discpower(analysis, path) -> str:
    """ASL curves (Sakai IPSJ 2007 Fig. 6: each column's run pairs sorted by ASL, one line per
    metric, the alpha line) and the discriminative power bars, in the table's order."""
    plt = pyplot()
    rows = analysis.rows("meta_discpower")
    labels = _short(analysis.results["labels"], [r["qrels"] for r in rows])
    vals = [100 * (r["disc_power"] or 0.0) for r in rows]
    texts = [
        f"{r['n_significant']}/{r['n_pairs']} = {100 * (r['disc_power'] or 0):.1f}%"
        + (f", diff {r['est_diff']:#.2g}" if r["est_diff"] is not None else "")
        for r in rows
    ]
    fig, (ax, ax2) = plt.subplots(
        1, 2, figsize=(13, max(4.5, 0.5 * len(rows) + 1.8)), gridspec_kw={"width_ratios": [3, 2]}
    )
    a = rows[0]
    for lab, res in zip(labels, analysis.results.get("bootstrap", [])):
        asl = np.sort(np.asarray(res.asl))
        ax.plot(np.arange(1, asl.size + 1), asl, linewidth=1.2, label=lab)
    ax.axhline(a["alpha"], color="grey", ls="--", lw=1)
    ax.set_xlabel("run pairs, sorted by ASL")
    ax.set_ylabel("achieved significance level (ASL)")
    ax.set_title(
        f"ASL curves, paired bootstrap test ({a['qrels']}, {a['n_runs']} runs, B = {analysis.params['trials']}; "
        "Sakai IPSJ 2007 Fig. 6)",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    # the bars in the table's order (report.meta_tables.discpower: most pairs significant first)
    order = figure_data.discpower_bars(analysis)
    _bars(
        ax2,
        [labels[i] for i in order],
        [vals[i] for i in order],
        [texts[i] for i in order],
        f"% run pairs with ASL < {a['alpha']:g}",
        "Discriminative power",
    )
    return save_figure(fig, path)


def plot_tests(analysis, path) -> str:
    plt = pyplot()
    rows = analysis.rows("meta_discpower")
    tests = list(dict.fromkeys(r["test"] for r in rows))
    cols = list(dict.fromkeys((r["qrels"], r["metric"]) for r in rows))
    labels = _short(analysis.results["labels"], [q for q, _ in cols])
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(cols) + 2), 4.5))
    width = 0.8 / len(tests)
    x = np.arange(len(cols))
    for k, t in enumerate(tests):
        v = [
            100 * next((r["disc_power"] or 0.0) for r in rows if r["test"] == t and (r["qrels"], r["metric"]) == c)
            for c in cols
        ]
        ax.bar(x + k * width - 0.4 + width / 2, v, width, label=t)
    ax.set_xticks(x, labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(f"% pairs significant (alpha = {rows[0]['alpha']:g}, adjust = {rows[0]['adjust']})")
    qrels = ", ".join(dict.fromkeys(q for q, _ in cols))
    ax.set_title(f"Discriminative power per paired test ({qrels}, B = {analysis.params['trials']})", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_robustness(analysis, path) -> str:
    plt = pyplot()
    curves = analysis.results["curves"]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    panels = [
        ("tau_mean", "Kendall's tau with the full qrels", "Sakai SIGIR 2007 Fig. 2 / Bompada et al. 2007 Fig. 1"),
        (
            "disc_power",
            f"discriminative power ({analysis.params['test']}, alpha = {analysis.params['alpha']:g})",
            "Sakai SIGIR 2007 Fig. 3",
        ),
        ("accuracy", "accuracy of test outcomes vs full qrels", "Bompada et al. 2007 Fig. 2"),
        ("g_mean", "g-mean of test outcomes vs full qrels", "Bompada et al. 2007 Fig. 2"),
    ]
    for ax, (key, ylabel, ref) in zip(axes.ravel(), panels):
        for metric, curve in curves.items():
            f = [100 * c["fraction"] for c in curve]
            v = [np.nan if c[key] is None else (100 * c[key] if key == "disc_power" else c[key]) for c in curve]
            ax.plot(f, v, marker="o", ms=3, label=metric)
        if key in ("tau_mean", "accuracy"):
            ax.axhline(analysis.params["threshold"], color="grey", ls="--", lw=1)
        ax.invert_xaxis()
        ax.set_xlabel("judgments kept (% of the full qrels set)")
        ax.set_ylabel(ylabel + (" (%)" if key == "disc_power" else ""))
        ax.set_title(ref, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(
        f"Robustness to incomplete judgments: {analysis.params['parent']} ({len(analysis.inputs['runs'])} runs)"
    )
    return save_figure(fig, path)


#: Runs up to which ``compare --plot`` draws a line per run; beyond it, a heat map.
LINE_PLOT_MAX_RUNS = 10


def plot_compare(cmp, path) -> str:
    """Per-topic differences against the baseline (``evalstore compare --plot``), one panel per
    metric. Every run's topics in one order (the mean difference over the runs, largest first), so
    a topic can be followed from run to run. Up to :data:`LINE_PLOT_MAX_RUNS` runs: a line per run,
    each in its own colour and marker, the legend beside the axes; more runs: a heat map (runs x
    topics, red worse and blue better than the baseline, runs by their mean difference)."""
    plt = pyplot()
    k = len(cmp.metrics)
    n_runs = len(cmp.runs) - 1
    heat = n_runs > LINE_PLOT_MAX_RUNS
    n_topics = len(cmp.matrices[0].topics)
    width = max(6.0, min(18.0, 0.16 * n_topics + 3.0)) if heat else 7.5
    height = max(3.5, 0.22 * n_runs + 1.8) if heat else 4.2
    fig, axes = plt.subplots(k, 1, figsize=(width, height * k), squeeze=False)
    for row, (m, label) in enumerate(zip(cmp.matrices, cmp.metrics)):
        ax = axes[row, 0]
        d = m.values[1:] - m.values[0]
        order = figure_data.topic_order(d)
        title = f"{cmp.qrels}: {label} of each run minus {cmp.baseline} ({cmp.test} test"
        title += "; ▲ / ▼ significantly better / worse)" if heat else ")"
        if heat:
            _difference_map(fig, ax, cmp, label, d[:, order], [m.topics[j] for j in order], m.runs[1:])
        else:
            _difference_lines(ax, cmp, label, d[:, order], m.runs[1:])
        ax.set_title(title, fontsize=10)
    return save_figure(fig, path)


def _difference_lines(ax, cmp, label: str, d: np.ndarray, runs: Sequence[str]) -> None:
    import matplotlib

    colour = matplotlib.colormaps["tab10"]
    markers = "os^vD<>Pp*"
    x = np.arange(1, d.shape[1] + 1)
    for i, run in enumerate(runs):
        sig = figure_data.significance(cmp, run, label)
        mark = f" ({sig})" if sig else ""
        ax.plot(x, d[i], marker=markers[i % len(markers)], markersize=3, linewidth=1,
                color=colour(i % 10), label=f"{run}{mark}")  # fmt: skip
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("topics, by the mean difference over the runs (the same order for every run)")
    ax.set_ylabel(f"{label}: run - baseline")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _difference_map(fig, ax, cmp, label: str, d: np.ndarray, topics: Sequence[str], runs: Sequence[str]) -> None:
    rows = np.argsort(-d.mean(axis=1), kind="stable")
    lim = float(np.nanmax(np.abs(d))) or 1.0
    img = ax.imshow(d[rows], aspect="auto", cmap="RdBu", vmin=-lim, vmax=lim, interpolation="nearest")
    labels = []
    for i in rows:
        sig = figure_data.significance(cmp, runs[i], label)
        labels.append(runs[i] + {"better": " ▲", "worse": " ▼"}.get(sig, ""))
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    step = max(1, len(topics) // 60)
    ax.set_xticks(range(0, len(topics), step), [topics[j] for j in range(0, len(topics), step)], rotation=90,
                  fontsize=6)  # fmt: skip
    ax.set_xlabel("topics, by the mean difference over the runs")
    cb = fig.colorbar(img, ax=ax, fraction=0.03, pad=0.01)
    cb.set_label(f"{label}: run - baseline", fontsize=8)


def plot_scores(result, path, title: str = "") -> str:
    """Per-topic scores as a box plot per run (``evalstore eval --plot``), one panel per metric,
    runs in the leaderboard's order (best mean of the first metric first)."""
    plt = pyplot()
    metrics, runs = figure_data.score_runs(result)
    values: dict[tuple[str, str], list[float]] = {}
    for m, r, _, _, v in figure_data.scores(result).rows:
        values.setdefault((r, m), []).append(v)
    k = len(metrics)
    fig, axes = plt.subplots(k, 1, figsize=(max(6.0, 0.45 * len(runs) + 2), 3.6 * k), squeeze=False)
    for ax, m in zip(axes[:, 0], metrics):
        ax.boxplot([values.get((r, m), []) for r in runs], showmeans=True)
        ax.set_xticks(range(1, len(runs) + 1), runs, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(f"{m} per topic")
        ax.set_title(f"{title + ': ' if title else ''}{m} per topic, by run (triangle = mean)", fontsize=10)
    return save_figure(fig, path)

"""Tables of meta-evaluation analyses (:mod:`evalstore.meta`), in two styles.

``paper=True`` lays a table out as the papers print it (Sakai, IPSJ TOD 2007; Sakai, SIGIR 2007;
Bompada et al., SIGIR 2007): letters for columns, ``.4123`` without the leading
zero, percentages, notes. ``paper=False`` gives the same results as plain values, one column per
statistic, for csv / tsv / json and files.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from statistics import NormalDist
from typing import Any, Protocol

from ..stats.significance import min_trials
from .table import Table

KENDALL_STATS = ("tau", "tau_a", "tau_b", "spearman", "p_value", "z")
ROBUSTNESS_TABLES = ("tau", "discpower", "confusion", "knee")


class Analysis(Protocol):
    """What a table reads of an analysis (an :class:`evalstore.meta.persist.Analysis`; the reports
    sit below the analyses and do not import them): its parameters, seed, inputs (the score
    columns and runs it read), results for printing and result rows per meta table."""

    params: dict[str, Any]
    seed: int | None
    inputs: dict[str, Any]
    results: dict[str, Any]

    def rows(self, table: str) -> list[dict[str, Any]]: ...


# --------------------------------------------------------------------------- number styles
def pct(x: float | None, digits: int = 1) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}%"


def share(x: float | None) -> str:
    """Percent as Sakai IPSJ 2007 Table 3 prints it: 43%, 5.6%, and two significant figures below 1 %."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    p = 100 * x
    if p == 0 or p >= 10:
        return f"{p:.0f}%"
    return f"{p:.1f}%" if p >= 1 else f"{p:.2g}%"


def fix(x: float | None, digits: int = 4) -> str:
    """``0.4123`` -> ``.4123`` (the papers' style)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("0.") else ("-" + s[2:] if s.startswith("-0.") else s)


def letters(k: int) -> list[str]:
    """Column letters (a), (b), ..., (z), (aa), ..."""
    out = []
    for i in range(k):
        s, n = "", i
        while True:
            s = chr(ord("a") + n % 26) + s
            n = n // 26 - 1
            if n < 0:
                break
        out.append(f"({s})")
    return out


def labels(an: Analysis) -> list[str]:
    """Column labels: the metric as requested, with its qrels set when several are compared."""
    qrels = [c["qrels"] for c in an.inputs["columns"]]
    names = [c["label"] for c in an.inputs["columns"]]
    if len(set(qrels)) > 1:
        return [f"{lab} [{q}]" for lab, q in zip(names, qrels)]
    return names


def _by_column(an: Analysis) -> dict[tuple[str, str], str]:
    return {(c["qrels"], c["metric"]): lab for c, lab in zip(an.inputs["columns"], labels(an))}


def tau_threshold(n: int, alpha: float = 0.01) -> float:
    """|tau| above which Sakai IPSJ 2007 Eq. 9's two-sided Z test is significant at alpha, for n runs."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return z * math.sqrt((4 * n + 10) / (9 * n * (n - 1))) if n > 1 else float("nan")


# --------------------------------------------------------------------------- kendall
def kendall(an: Analysis, *, stat: str = "tau", long: bool = False, paper: bool = True) -> Table:
    """A matrix of one statistic between every two columns, or (``long``) one row per pair."""
    labs = labels(an)
    rows = an.rows("meta_correlations")
    n_runs = len(an.inputs["runs"])
    if long:
        cols = ["column_a", "column_b", "n_runs", "tau", "tau_a", "tau_b", "concordant", "discordant", "ties", "z",
                "p_value", "spearman"]  # fmt: skip
        pairs = [
            (labs[r["col_a"]], labs[r["col_b"]], r["n_runs"], r["tau"], r["tau_a"], r["tau_b"], r["concordant"],
             r["discordant"], r["ties_a"] + r["ties_b"] + r["ties_both"], r["z"], r["p_value"], r["spearman"])
            for r in rows
        ]  # fmt: skip
        return Table(cols, pairs, title=f"Rank correlations ({n_runs} runs)")
    k = len(labs)
    cell = {(r["col_a"], r["col_b"]): r[stat] for r in rows}
    let = letters(k)
    head = ["metric"] + (let[1:] if paper else labs[1:])
    out: list[list[Any]] = []
    for i in range(k - 1):
        line: list[Any] = [f"{let[i]} {labs[i]}" if paper else labs[i]]
        for j in range(1, k):
            v = cell.get((i, j))
            if paper:
                line.append("-" if j <= i else (fix(v, 4) if stat != "z" else ("" if v is None else f"{v:.2f}")))
            else:
                line.append(v if j > i else None)
        out.append(line)
    note = "tau-b where a ranking has ties" if stat == "tau" else stat
    title = (
        f"Kendall's rank correlation ({note}), {n_runs} runs"
        if stat.startswith("tau")
        else f"{stat} between system rankings, {n_runs} runs"
    )
    legend = []
    if paper:
        legend.append(
            f"{let[-1]} = {labs[-1]}; with {n_runs} runs |tau| > {tau_threshold(n_runs):.3f} is significant at "
            f"0.01 (Sakai IPSJ 2007 Eq. 9, two-sided)"
        )
    return Table(head, out, title=title, legend=legend)


# --------------------------------------------------------------------------- swap
def swap(an: Analysis, *, bins: bool = False, paper: bool = True) -> Table:
    """Sakai IPSJ 2007 Table 3's columns per metric (sorted by share), or the swap rate of every bin."""
    labs = labels(an)
    trials, seed = an.params["trials"], an.seed
    if bins:
        per: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in an.rows("meta_swap_bins"):
            per.setdefault((r["qrels"], r["metric"]), []).append(r)
        keys = list(per)
        head = ["bin"] + [f"{lab} rate" for lab in labs] + [f"{lab} n" for lab in labs]
        out: list[Any] = []
        for b in range(len(per[keys[0]])):
            first = per[keys[0]][b]
            name = f"[{first['lo']:.2f}, {first['hi']:.2f})" if math.isfinite(first["hi"]) else f">= {first['lo']:.2f}"
            rates = [per[k][b]["swap_rate"] for k in keys]
            ns = [per[k][b]["comparisons"] for k in keys]
            out.append([name] + ([pct(x) for x in rates] if paper else rates) + ns)
        return Table(head, out, title=f"Swap rate per difference bin (B = {trials}, seed {seed})")
    rows = sorted(zip(labs, an.rows("meta_swap")), key=lambda lr: -(lr[1]["share"] or -1))
    if paper:
        head = ["metric", "abs. diff.", "max.", "(ii)/(iii)", "%pairs satisfying (ii)"]
        out = [
            (lab, "n/a" if r["abs_diff"] is None else f"{r['abs_diff']:.2f}", fix(r["max_diff"]),
             pct(r["rel_diff"], 0), share(r["share"]))
            for lab, r in rows
        ]  # fmt: skip
    else:
        head = ["metric", "qrels", "canonical", "n_runs", "n_topics", "n_pairs", "trials", "abs_diff",
                "abs_diff_first", "max_diff", "rel_diff", "share"]  # fmt: skip
        out = [
            (lab, r["qrels"], r["metric"], r["n_runs"], r["n_topics"], r["n_pairs"], r["trials"], r["abs_diff"],
             r["abs_diff_first"], r["max_diff"], r["rel_diff"], r["share"])
            for lab, r in rows
        ]  # fmt: skip
    first = an.rows("meta_swap")[0]
    title = (
        f"Swap method (swap rate <= {100 * an.params['max_rate']:g}%; {first['n_runs']} runs, "
        f"{first['n_topics']} topics, B = {trials}, seed {seed})"
    )
    legend = (
        [
            "abs. diff. (ii): the smallest difference in means that keeps the swap rate within the guarantee; "
            "max. (iii): the largest difference over all pairs, trials and both topic sets; (ii)/(iii): their ratio; "
            "%pairs satisfying (ii): the share of comparisons at least that far apart (Sakai IPSJ TOD 2007 Table 3)"
        ]
        if paper
        else []
    )
    return Table(head, out, title=title, legend=legend)


# --------------------------------------------------------------------------- discpower
def discpower(an: Analysis, *, pairs: bool = False, paper: bool = True) -> Table:
    """Sensitivity and estimated difference per metric (Sakai IPSJ 2007 Table 4), or every pair's ASL."""
    labs = labels(an)
    trials, seed, alpha = an.params["trials"], an.seed, an.params["alpha"]
    if pairs:
        lab = _by_column(an)
        head = ["metric", "run_a", "run_b", "mean_a", "mean_b", "diff", "t", "ASL", "significant"]
        out: list[Any] = [
            (lab[(r["qrels"], r["metric"])], r["run_a"], r["run_b"], r["mean_a"], r["mean_b"], r["diff"],
             r["statistic"], r["p_value"], r["significant"])
            for r in an.rows("meta_pair_tests")
        ]  # fmt: skip
        return Table(head, out, title=f"Paired bootstrap tests (B = {trials}, seed {seed})")
    rows = sorted(zip(labs, an.rows("meta_discpower")), key=lambda lr: -lr[1]["n_significant"])
    if paper:
        head = ["metric", f"sensitivity (ASL < {alpha:g})", "estimated diff."]
        out = [
            (lab, f"{r['n_significant']}/{r['n_pairs']} = {pct(r['disc_power'])}",
             "" if r["est_diff"] is None else f"{r['est_diff']:#.2g}")
            for lab, r in rows
        ]  # fmt: skip
    else:
        head = ["metric", "qrels", "canonical", "n_runs", "n_topics", "n_pairs", "n_significant", "disc_power",
                "est_diff", "alpha", "trials"]  # fmt: skip
        out = [
            (lab, r["qrels"], r["metric"], r["n_runs"], r["n_topics"], r["n_pairs"], r["n_significant"],
             r["disc_power"], r["est_diff"], r["alpha"], trials)
            for lab, r in rows
        ]  # fmt: skip
    first = an.rows("meta_discpower")[0]
    title = (
        f"Bootstrap sensitivity (alpha = {alpha:g}; {first['n_runs']} runs, "
        f"{first['n_topics']} topics, B = {trials}, seed {seed})"
    )
    legend = (
        [
            f"sensitivity: the run pairs with ASL < {alpha:g} among all pairs (discriminative power); "
            "estimated diff.: per pair, the |mean difference| of the bootstrap sample at the (B * alpha)-th "
            "largest |t*|, the largest over pairs, two significant figures (Sakai IPSJ TOD 2007 Table 4)"
        ]
        if paper
        else []
    )
    return Table(head, out, title=title, legend=legend)


# --------------------------------------------------------------------------- tests
def tests(an: Analysis, *, pairs: bool = False, paper: bool = True) -> Table:
    """Discriminative power of each test per metric, or every pair's (adjusted) p-values."""
    lab = _by_column(an)
    names, trials, seed = an.params["tests"], an.params["trials"], an.seed
    alpha, adjust = an.params["alpha"], an.params["adjust"]
    if pairs:
        wide: dict[tuple, dict[str, Any]] = {}
        for r in an.rows("meta_pair_tests"):
            key = (lab[(r["qrels"], r["metric"])], r["run_a"], r["run_b"])
            d = wide.setdefault(key, {"mean_a": r["mean_a"], "mean_b": r["mean_b"], "diff": r["diff"]})
            d[r["test"]] = r["p_adjusted"]
        head = ["metric", "run_a", "run_b", "mean_a", "mean_b", "diff"] + [f"p_{t}" for t in names]
        show = p_text if paper else (lambda v: v)  # a terminal shows <0.001, not 0.0000
        out: list[Any] = [
            (*k, v["mean_a"], v["mean_b"], v["diff"], *[show(v[t]) for t in names]) for k, v in wide.items()
        ]
        which = "p adjusted: " + adjust if adjust != "none" else "p"
        return Table(head, out, title=f"Paired tests ({which}; B = {trials}, seed {seed})", notes=_trial_notes(an))
    rows = an.rows("meta_discpower")
    if paper:
        head = ["metric"] + [f"{t} (p < {alpha:g})" for t in names]
        per: dict[str, dict[str, str]] = {}
        for r in rows:
            per.setdefault(lab[(r["qrels"], r["metric"])], {})[r["test"]] = (
                f"{r['n_significant']}/{r['n_pairs']} = {pct(r['disc_power'])}"
            )
        out = [(k, *[v[t] for t in names]) for k, v in per.items()]
    else:
        head = ["metric", "qrels", "canonical", "test", "alpha", "adjust", "n_pairs", "n_significant", "disc_power",
                "est_diff"]  # fmt: skip
        out = [
            (lab[(r["qrels"], r["metric"])], r["qrels"], r["metric"], r["test"], r["alpha"], r["adjust"],
             r["n_pairs"], r["n_significant"], r["disc_power"], r["est_diff"])
            for r in rows
        ]  # fmt: skip
    title = f"Discriminative power per test (adjust = {adjust}; {rows[0]['n_runs']} runs, {rows[0]['n_topics']} topics)"
    return Table(head, out, title=title, notes=_trial_notes(an))


def input_notes(columns: list[dict[str, Any]]) -> list[str]:
    """What a reader of an analysis should know about its inputs (``Analysis.inputs["columns"]``):
    the metrics' notes on their qrels sets (a diversity metric on a set without subtopic judgments,
    a threshold above every grade: as ``eval`` says them), then :func:`missing_notes`."""
    metric = list(dict.fromkeys(n for c in columns for n in c.get("notes", [])))
    return metric + missing_notes(columns)


def missing_notes(columns: list[dict[str, Any]]) -> list[str]:
    """What a missing-topic policy did to an analysis' inputs (``Analysis.inputs["columns"]``), one
    line per kind: runs and topics dropped (``drop_runs`` / ``drop_topics``), cells set to 0 (``zero``)."""
    runs = list(dict.fromkeys(r for c in columns for r in c.get("dropped_runs", [])))
    topics = list(dict.fromkeys(t for c in columns for t in c.get("dropped_topics", [])))
    filled = {c.get("label", c["metric"]): c["filled_with_zero"] for c in columns if c.get("filled_with_zero")}
    notes = []
    if runs:
        notes.append(f"left out (not scored on every topic): {len(runs)} run(s): {', '.join(runs)}")
    if topics:
        shown = ", ".join(topics[:10]) + (", ..." if len(topics) > 10 else "")
        notes.append(f"left out (not every run scored): {len(topics)} topic(s): {shown}")
    if filled:
        notes.append("scored 0 where a run has no score: " + ", ".join(f"{k}: {v} cell(s)" for k, v in filled.items()))
    return notes


def p_text(p: float | None) -> str:
    """A p-value as a terminal shows it: ``<0.001`` below 0.001, else three decimals."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _trial_notes(an: Analysis) -> list[str]:
    """A note when B is too small for any Monte-Carlo p-value, (c + 1) / (B + 1) >= 1 / (B + 1), to be
    significant after the adjustment over a column's run pairs, with the B that would allow it."""
    monte_carlo = [t for t in an.params["tests"] if t in ("randomisation", "bootstrap")]
    rows = an.rows("meta_discpower")
    if not monte_carlo or not rows:
        return []
    trials, alpha, adjust, n_pairs = an.params["trials"], an.params["alpha"], an.params["adjust"], rows[0]["n_pairs"]
    need = min_trials(alpha, n_pairs, adjust)
    if need <= trials:
        return []
    return [
        f"{' and '.join(monte_carlo)}: with B = {trials} the smallest possible p-value is 1/(B+1) = "
        f"{1 / (trials + 1):.2g}, which cannot be significant at alpha = {alpha:g}"
        + (f" after the {adjust} adjustment over {n_pairs} pairs" if adjust != "none" else "")
        + f"; use --trials {need} or more"
    ]


# --------------------------------------------------------------------------- robustness
def robustness(an: Analysis, *, show: Collection[str] = ROBUSTNESS_TABLES, paper: bool = True) -> list[Table]:
    """The curves per fraction: one data table, or (``paper``) the tables named in ``show``."""
    curves = an.results["curves"]
    metrics = list(curves)
    test, alpha, threshold = an.params["test"], an.params["alpha"], an.params["threshold"]
    n_runs = len(an.inputs["runs"])
    if not paper:
        head = ["metric", "fraction", "n_trials", "tau_mean", "tau_min", "tau_max", "disc_power", "c11", "c12", "c21",
                "c22", "accuracy", "g_mean", "false_pos", "false_neg"]  # fmt: skip
        out = [tuple([m] + [c[h] for h in head[1:]]) for m in metrics for c in curves[m]]
        return [Table(head, out, title="robustness")]
    fracs = [c["fraction"] for c in curves[metrics[0]]]
    fhead = [f"{100 * f:g}%" for f in fracs]
    ntr = max(c["n_trials"] for c in curves[metrics[0]])
    tables = []
    if "tau" in show:
        tables.append(
            Table(
                ["metric"] + fhead,
                [(m, *[fix(c["tau_mean"], 3) for c in curves[m]]) for m in metrics],
                title=f"Kendall's tau with the full-qrels ranking ({n_runs} runs"
                f"{f', mean of {ntr} trials' if ntr > 1 else ''}) - Sakai SIGIR 2007 Fig. 2, "
                "Bompada et al. 2007 Fig. 1",
            )
        )
    if "discpower" in show:
        tables.append(
            Table(
                ["metric"] + fhead,
                [(m, *[pct(c["disc_power"]) for c in curves[m]]) for m in metrics],
                title=f"Discriminative power ({test}, alpha = {alpha:g}) - Sakai SIGIR 2007 Fig. 3",
            )
        )
    if "confusion" in show:
        out = [
            (m, f"{100 * c['fraction']:g}%", c["c11"], c["c12"], c["c21"], c["c22"], fix(c["accuracy"], 3),
             fix(c["g_mean"], 3), c["false_pos"], c["false_neg"])
            for m in metrics
            for c in curves[m]
            if c["fraction"] < 1.0
        ]  # fmt: skip
        head = ["metric", "fraction", "C11", "C12", "C21", "C22", "accuracy", "g-mean", "false pos (C21)",
                "false neg (C12)"]  # fmt: skip
        title = (
            f"Test outcomes full vs reduced qrels ({test}; 1 = H0 accepted, 2 = rejected) - Bompada et al. 2007 Table 2"
        )
        tables.append(Table(head, out, title=title))
    if "knee" in show:
        kn = {(r["metric"], r["criterion"]): r for r in an.rows("meta_knees")}
        tables.append(
            Table(
                ["metric", f"knee: tau > {threshold:g}", f"knee: accuracy > {threshold:g}"],
                [(m, *[_knee(kn[(m, c)]) for c in ("tau", "accuracy")]) for m in metrics],
                title="Knees (lowest fraction from which the curve stays above the threshold; "
                "first crossing in brackets if lower) - Bompada et al. 2007 Tables 3, 5",
            )
        )
    return tables


def _knee(r: dict[str, Any]) -> str:
    k, first = r["knee"], r["knee_first"]
    if k is None:
        return "none"
    s = f"{100 * k:g}%"
    if first is not None and first < k:
        s += f" ({100 * first:g}%)"
    return s

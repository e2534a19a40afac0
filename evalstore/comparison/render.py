"""A comparison as tables: the paper table (runs x metrics, means with significance markers) for a
terminal, Markdown and LaTeX, and the long data table (one row per comparison) for csv/tsv/json.

Markers: ``▲`` / ``▼`` (LaTeX ``$^{\\uparrow}$`` / ``$^{\\downarrow}$``) after a mean that is
significantly better / worse than the baseline's; with ``all_pairs`` each run gets a letter and a
mean carries the letters of the runs it is significantly better than (as ranx does). The best mean
of a column is bold in Markdown and LaTeX (every run that prints it, on a tie). p-values print as
``<0.001`` below 0.001.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..report.meta_tables import missing_notes, p_text
from ..report.table import Table
from ..report.writers import tex_escape
from .core import Comparison

UP, DOWN = "▲", "▼"
FORMATS = ("table", "markdown", "latex", "csv", "tsv", "json")
#: A p-value as printed: ``<0.001`` below 0.001, else three decimals (one rule with the meta tables).
format_p = p_text


def letters(cmp: Comparison) -> list[str]:
    return [chr(ord("a") + i) if i < 26 else f"r{i}" for i in range(len(cmp.runs))]


def _markers(cmp: Comparison, i: int, k: int) -> tuple[str, str]:
    """(direction marker, letters) of run i on metric k."""
    run, metric = cmp.runs[i], cmp.metrics[k]
    mark = ""
    if i > 0:
        p = cmp.pair(run, cmp.baseline, metric)
        if p is not None and p["significant"]:
            better = (p["diff"] > 0) == (p["run"] == run)
            mark = UP if better else DOWN
    beaten = ""
    if cmp.all_pairs:
        lets = letters(cmp)
        for j, other in enumerate(cmp.runs):
            q = cmp.pair(run, other, metric) if j != i else None
            if q is not None and q["significant"] and ((q["diff"] > 0) == (q["run"] == run)):
                beaten += lets[j]
    return mark, beaten


def _best(cmp: Comparison, k: int) -> set[int]:
    """The runs whose mean of metric k, as printed (4 decimals), is the column's best: all of them
    when several print the same value (a reader cannot tell them apart)."""
    shown = [f"{v:.4f}" for v in cmp.means[:, k]]
    top = shown[int(np.argmax(cmp.means[:, k]))]
    return {i for i, v in enumerate(shown) if v == top}


def _run_label(cmp: Comparison, i: int) -> str:
    label = cmp.runs[i] + (" (baseline)" if i == 0 else "")
    return f"({letters(cmp)[i]}) {label}" if cmp.all_pairs else label


def legend_lines(cmp: Comparison) -> list[str]:
    lines = [cmp.legend()]
    lines.append(
        f"{UP} / {DOWN}: significantly better / worse than the baseline {cmp.baseline}"
        + ("; letters: the runs a mean is significantly better than" if cmp.all_pairs else "")
    )
    lines += missing_notes([m.describe() for m in cmp.matrices])
    if cmp.analysis_id is not None:
        tables = "meta_runs, meta_pair_tests" + (", meta_effects" if cmp.effects else "")
        lines.append(f"stored as analysis {cmp.analysis_id} ({tables})")
    return lines + cmp.notes


def paper_table(cmp: Comparison) -> Table:
    """Runs x metrics, each cell the mean with its markers (a terminal table)."""
    rows = []
    for i in range(len(cmp.runs)):
        cells: list[Any] = [_run_label(cmp, i)]
        for k in range(len(cmp.metrics)):
            mark, beaten = _markers(cmp, i, k)
            cells.append(f"{cmp.means[i, k]:.4f}{(' ' + mark) if mark else ''}{('^' + beaten) if beaten else ''}")
        rows.append(cells)
    title = f"{cmp.qrels}: runs against {cmp.baseline}"
    return Table(["run", *cmp.metrics], rows, title=title, notes=legend_lines(cmp), digits=None)


def pairs_table(cmp: Comparison) -> Table:
    """One row per comparison (and effect sizes when computed): the data behind the markers."""
    fx = {(e["metric"], e["run"], e["other"]): e for e in cmp.effects}
    cols = ["qrels", "metric", "run", "other", "mean_run", "mean_other", "diff", "test", "statistic"]
    cols += ["p_value", "p_adjusted", "significant", "direction"]
    extra = ["ci_t_lo", "ci_t_hi", "ci_boot_lo", "ci_boot_hi", "d_z", "smd"] if cmp.effects else []
    rows = []
    for p in cmp.pairs:
        row = [p[c] for c in cols]
        e = fx.get((p["stored"], p["run"], p["other"]))
        rows.append(row + [e[c] if e else None for c in extra])
    return Table(cols + extra, rows, title="comparisons", notes=legend_lines(cmp), digits=4)


def markdown(cmp: Comparison) -> str:
    head = "| run | " + " | ".join(_md_escape(m) for m in cmp.metrics) + " |"
    rule = "|---|" + "---:|" * len(cmp.metrics)
    lines = [head, rule]
    best = [_best(cmp, k) for k in range(len(cmp.metrics))]
    for i in range(len(cmp.runs)):
        cells = [_md_escape(_run_label(cmp, i))]
        for k in range(len(cmp.metrics)):
            mark, beaten = _markers(cmp, i, k)
            v = f"{cmp.means[i, k]:.4f}"
            v = f"**{v}**" if i in best[k] else v
            cells.append(v + (f" {mark}" if mark else "") + (f"<sup>{beaten}</sup>" if beaten else ""))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("\n\n".join(_md_escape(x) for x in legend_lines(cmp)[:2]))
    return "\n".join(lines) + "\n"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def latex(cmp: Comparison) -> str:
    """A booktabs table (needs ``\\usepackage{booktabs}``), compilable as is inside a document."""
    best = [_best(cmp, k) for k in range(len(cmp.metrics))]
    out = [
        "% evalstore compare; needs \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\caption{" + tex_escape(_caption(cmp)) + "}",
        "\\begin{tabular}{l" + "r" * len(cmp.metrics) + "}",
        "\\toprule",
        "Run & " + " & ".join(tex_escape(m) for m in cmp.metrics) + " \\\\",
        "\\midrule",
    ]
    for i in range(len(cmp.runs)):
        cells = [tex_escape(_run_label(cmp, i))]
        for k in range(len(cmp.metrics)):
            mark, beaten = _markers(cmp, i, k)
            v = f"{cmp.means[i, k]:.4f}"
            v = f"\\textbf{{{v}}}" if i in best[k] else v
            if mark:
                v += "$^{\\uparrow}$" if mark == UP else "$^{\\downarrow}$"
            if beaten:
                v += f"$^{{{beaten}}}$"
            cells.append(v)
        out.append(" & ".join(cells) + " \\\\")
        if i == 0:
            out.append("\\midrule")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def _caption(cmp: Comparison) -> str:
    sig = "up/down arrow: significantly better/worse than the baseline"
    if cmp.all_pairs:
        sig += "; letters: runs a mean is significantly better than"
    return f"Mean scores on {cmp.qrels}, {len(cmp.runs) - 1} runs against {cmp.baseline}. {cmp.legend()}. {sig}."


def long_table(cmp: Comparison) -> Table:
    """The data for csv/tsv/json: one row per comparison."""
    t = pairs_table(cmp)
    t.title = None
    t.digits = None
    return t

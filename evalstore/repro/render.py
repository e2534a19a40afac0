"""Tables of `evalstore repro` and `evalstore design` (one :class:`Table` each, written by
:mod:`evalstore.output.writers`; JSON in repro_eval's shape comes from :meth:`Reproduction.to_dict`;
the figure, ER against ΔRI, is :func:`evalstore.output.plots.plot_er_dri`)."""

from __future__ import annotations

from ..meta.design import Design
from ..output.table import Table
from .core import SIDES, Reproduction

MEASURE_NAMES = {
    "arp": "ARP",
    "ktu": "KTU",
    "rbo": "RBO",
    "rmse": "RMSE",
    "nrmse": "nRMSE",
    "er": "ER",
    "dri": "ΔRI",
    "p_value": "p-value",
}


def table(r: Reproduction) -> Table:
    """One row per measure and metric: ``measure, metric, baseline, advanced, pair`` (KTU and RBO
    have no metric; ER and ΔRI are values of the pair; ARP rows give the original and the
    reproduced run's means as ``orig/rep``)."""
    rows: list[list] = []
    for m in r.metrics:
        rows.append(["ARP orig", m, r.arp["baseline"][m], r.arp["advanced"][m], None])
        rows.append(
            [
                "ARP " + ("rep" if r.kind == "reproducibility" else "rpl"),
                m,
                r.arp["rep_baseline"][m],
                r.arp["rep_advanced"][m],
                None,
            ]
        )
    if r.ktu is not None and r.rbo is not None:
        rows.append(["KTU", "", r.ktu["baseline"], r.ktu["advanced"], None])
        rows.append(["RBO", "", r.rbo["baseline"], r.rbo["advanced"], None])
    for name, d in (("RMSE", r.rmse), ("nRMSE", r.nrmse)):
        if d is not None:
            rows.extend([name, m, d["baseline"][m], d["advanced"][m], None] for m in r.metrics)
    rows.extend(["ER", m, None, None, r.er[m]] for m in r.metrics)
    rows.extend(["ΔRI", m, None, None, r.dri[m]] for m in r.metrics)
    rows.extend(["p-value", m, r.ttest["baseline"][m], r.ttest["advanced"][m], None] for m in r.metrics)
    runs = r.runs
    title = (
        f"{r.kind}: baseline {runs['baseline']} -> {runs['rep_baseline']}, advanced {runs['advanced']} -> "
        f"{runs['rep_advanced']} ({r.qrels}{' -> ' + r.rep_qrels if r.rep_qrels else ''})"
    )
    test = "paired" if r.kind == "reproducibility" else "unpaired"
    legend = [f"p-value: {test} two-sided t-test of each original run against its reproduction"]
    return Table(
        ["measure", "metric", "baseline", "advanced", "pair"], rows, title=title, notes=list(r.notes), legend=legend
    )


def per_topic_table(r: Reproduction) -> Table:
    """KTU and RBO of every topic: ``topic, ktu_baseline, ktu_advanced, rbo_baseline, rbo_advanced``."""
    if not r.per_topic:
        return Table(["topic"], [], title="no rankings compared (replicability)")
    topics = sorted(set().union(*(set(v) for by in r.per_topic.values() for v in by.values())))
    cols = [f"{meas}_{s}" for meas in ("ktu", "rbo") for s in SIDES]
    rows = [[t, *[r.per_topic[c.split("_")[0]][c.split("_")[1]].get(t) for c in cols]] for t in topics]
    return Table(["topic", *cols], rows, title="KTU and RBO per topic")


def design_table(d: Design) -> Table:
    """The design as ``quantity, value`` rows."""
    what = {"t": "paired t-test", "anova": "one-way ANOVA", "ci": "CI width"}[d.test]
    rows: list[list] = [
        ["test", what],
        ["alpha", d.alpha],
        ["beta", d.beta],
        ["min_diff" if d.test != "ci" else "width cap", d.min_diff],
    ]
    if d.systems is not None:
        rows.append(["systems", d.systems])
    rows += [
        ["variance V_E", d.variance],
        ["sigma^2 used", d.sigma2],
        ["topics required (exact)", d.n],
        ["topics required (Sakai's approximation)", d.n_approx],
        ["power at n" if d.test != "ci" else "expected width at n", d.achieved],
        ["current topics", d.n_topics],
        ["runs", d.n_runs],
        [
            "min_diff with current topics" if d.test != "ci" else "expected width with current topics",
            d.min_diff_current,
        ],
    ]
    if d.power_current is not None:
        rows.append(["power with current topics", d.power_current])
    notes = list(d.notes)
    if d.n != d.n_approx:
        notes.append(f"Sakai's closed-form approximation gives {d.n_approx} topics, the exact solution {d.n}")
    return Table(["quantity", "value"], rows, title=f"topic set size design: {d.metric} on {d.qrels}", notes=notes)

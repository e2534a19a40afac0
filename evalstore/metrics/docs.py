"""docs/metrics.md, generated from the registry and the SQL files (never edited by hand).

python -m evalstore.metrics.docs           write docs/metrics.md (in a source checkout)
python -m evalstore.metrics.docs --check   exit 1 if docs/metrics.md is not up to date
"""

from __future__ import annotations

import sys
from itertools import groupby

from ..base import generated
from . import sqlfile
from .names import format_value
from .references import agreement
from .registry import MetricSpec, all_metrics

DOC_PATH = generated.DOCS / "metrics.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _spec(s: MetricSpec) -> list[str]:
    b = s.block
    out = [f"### {s.name}", "", _cell(s.doc), ""]
    facts = [
        ("aliases", ", ".join(f"`{a}`" for a in s.aliases) or "none"),
        ("cutoff", {"none": "none", "optional": "optional `@k`", "required": "required `@k`"}[s.cutoff]),
        ("summary", {"mean": "mean", "gmean": "geometric mean (floor 1e-5)", "sum": "sum"}[s.aggregate]),
        ("SQL", f"`sql/{s.family}` block `{s.sql.partition('#')[2]}`"),
        ("reads", ", ".join(f"`{r}`" for r in sorted(b.reads))),
        ("needs", ", ".join(f"`{n}`" for n in sorted(b.needs)) or "none"),
        ("Python UDFs", ", ".join(f"`{u}`" for u in sorted(b.udfs)) or "none"),
        ("evalstore explain", f"yes (the block's CTE `{b.explanation.relation}`)" if b.explanation else "no"),
        ("source", _cell(s.citation)),
        ("agrees with", _cell(agreement(s.reference))),
    ]
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts]
    if s.params:
        out += ["", "| parameter | kind | default | meaning |", "|---|---|---|---|"]
        out += [f"| `{p.name}` | {p.kind} | `{format_value(p.default)}` | {_cell(p.doc)} |" for p in s.params]
    return out + [""]


def markdown() -> str:
    """The whole reference page."""
    specs = all_metrics()
    lines = [
        "# Metric reference",
        "",
        "Generated from the metric registry (`evalstore/metrics/families/`) and the SQL files (`sql/`) by",
        "`python -m evalstore.metrics.docs`; do not edit by hand (CI checks that it is up to date).",
        "`evalstore metrics` and `evalstore metrics NAME` show the same entries.",
        "",
        "| family (SQL file) | metrics |",
        "|---|---|",
    ]
    for family, group in groupby(specs, key=lambda s: s.family):
        lines.append(f"| `sql/{family}` | {', '.join(f'[{s.name}](#{_anchor(s.name)})' for s in group)} |")
    lines.append("")
    for family, group in groupby(specs, key=lambda s: s.family):
        header = sqlfile.load(family).header
        lines += [f"## `sql/{family}`", "", "```"]
        lines += [ln[3:] if ln.startswith("-- ") else ln.lstrip("-") for ln in header.strip().splitlines()]
        lines += ["```", ""]
        for s in group:
            lines += _spec(s)
    return "\n".join(lines).rstrip() + "\n"


def _anchor(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    return generated.main(DOC_PATH, markdown, "python -m evalstore.metrics.docs", argv)


if __name__ == "__main__":
    sys.exit(main())

"""Rendering the view models of :mod:`.pages` with the Jinja2 templates of ``templates/``.

Autoescaping is on for every template: each value a page shows is escaped (a run named
``<script>`` is text), the charts too: :mod:`.figure_charts` and :mod:`.page_charts` lay them out as numbers and plain
texts, and the macros of ``templates/figures.html`` write their SVG. ``static/`` holds the style sheet and the small
script that sorts tables; :data:`STATIC` lists them, and nothing else is ever served or copied.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from .deps import require

HERE = Path(__file__).resolve().parent
#: the static files by name: the only files the server answers /static/... with
STATIC = {"evalstore.css": "text/css; charset=utf-8", "sort.js": "text/javascript; charset=utf-8"}


#: The colours and font of the charts' axes and texts (the macros of ``templates/figures.html`` see
#: them as globals; :mod:`.svg` places the marks in these colours too).
CHART_STYLE = {
    "font": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
    "grid": "#e3e3e3",
    "axis": "#555",
    "ink": "#222",
}


def require_jinja() -> None:

    require("jinja2")


@cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = number
    env.filters["signed"] = signed
    env.filters["pvalue"] = pvalue
    env.filters["percent"] = percent
    env.filters["cell"] = cell
    env.filters["sortkey"] = sortkey
    env.globals.update(CHART_STYLE)
    return env


def render(template: str, model: dict[str, Any]) -> str:
    return environment().get_template(template).render(**model)


def chart_svg(chart: Any) -> str:
    """A chart of :mod:`.svg` as SVG text, drawn by the macros of ``templates/figures.html`` (as a
    page draws it)."""
    return str(environment().get_template("figures.html").module.draw(chart))


def static_bytes(name: str) -> bytes:
    """A static file's content, by its name in :data:`STATIC` (KeyError for any other name)."""
    if name not in STATIC:
        raise KeyError(name)
    return (HERE / "static" / name).read_bytes()


def number(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return "–"
    if math.isinf(f):
        return "∞" if f > 0 else "−∞"
    return f"{f:.{digits}f}"


def signed(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    f = float(v)
    if math.isnan(f):
        return "–"
    return f"{f:+.{digits}f}".replace("-", "−")


def percent(level: Any) -> str:
    """A confidence level as a page says it: ``0.95`` -> ``95 %`` (``–`` for none)."""
    if level is None:
        return "–"
    return f"{float(level) * 100:g} %"


def pvalue(v: Any) -> str:
    """A p-value as said in a paper: ``p = 0.0123``, ``p < 0.0001`` (never ``p = < 0.0001``)."""
    if v is None:
        return "p = –"
    f = float(v)
    if math.isnan(f):
        return "p = –"
    if f < 0.0001:
        return "p < 0.0001"
    return f"p = {f:.4f}"


def cell(v: Any) -> str:
    """A value of an SQL result or a meta table as text (floats to 4 decimals, long text cut)."""
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return number(v)
    text = str(v)
    return text if len(text) <= 2000 else text[:2000] + " …"


def sortkey(v: Any) -> str:
    """The value a table sorts a cell by (numbers in full precision, empty for no value)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        f = float(v)
        return "" if math.isnan(f) else repr(f)
    return str(v)

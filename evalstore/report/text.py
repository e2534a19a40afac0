"""How a value is shown as text: the one escaping rule for names, and cells per output format.

:func:`printable` is the one function every writer passes names through (run names, topics,
metric names, titles, legends, captions): a control character (an escape sequence, a newline, a
tab) is shown as ``\\xNN``, so a hostile name cannot recolour a terminal, split a row or add a
column. The syntax of a format is escaped on top of it: ``|`` in Markdown, LaTeX's specials.
"""

from __future__ import annotations

import math
import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: Any) -> str:
    """``text`` with control characters shown as ``\\xNN`` (see the module docstring)."""
    s = str(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", s) if _CONTROL.search(s) else s


def markdown_escape(text: Any) -> str:
    """A Markdown table cell: printable, with ``|`` escaped."""
    return printable(text).replace("|", "\\|")


_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text: Any) -> str:
    """LaTeX text: printable, with LaTeX's special characters escaped."""
    return "".join(_TEX.get(c, c) for c in printable(text))


def number(v: float, digits: int | None) -> str:
    """A float with ``digits`` decimals (all of them when None); NaN as ``nan``."""
    if math.isnan(v):
        return "nan"
    return f"{v:.{digits}f}" if digits is not None else repr(v)


def cell(v: Any, digits: int | None) -> str:
    """A value as shown in a table for readers: floats with ``digits`` decimals, NULL empty,
    text printable."""
    if v is None:
        return ""
    if isinstance(v, float):
        return number(v, digits)
    return printable(v)

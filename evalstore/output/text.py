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


#: the characters that Markdown (CommonMark and GitHub's tables) reads as markup in a cell: each is
#: written behind a backslash, so it shows as itself (``<script>`` as text, not HTML; ``a\\|b`` with
#: its backslash; ``*x*`` without emphasis); ``_`` only where it can start or end emphasis (not
#: between two letters or digits, as in ``n_topics``), ``]`` only where it would close a link's
#: text (before ``(`` or ``[``: ``[95% CI]`` stays as it is)
_MARKDOWN = frozenset("\\`*_]<>|~&")


def markdown_escape(text: Any) -> str:
    """A Markdown table cell: printable, every character Markdown reads as markup escaped."""
    s = printable(text)
    if not any(c in _MARKDOWN for c in s):
        return s
    out = []
    for i, c in enumerate(s):
        after = s[i + 1] if i + 1 < len(s) else ""
        inert = (c == "_" and i > 0 and s[i - 1].isalnum() and after.isalnum()) or (
            c == "]" and after not in ("(", "[")
        )
        out.append("\\" + c if c in _MARKDOWN and not inert else c)
    return "".join(out)


_TEX = {
    # LaTeX's special characters
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
    # characters LaTeX's default font encoding (OT1) prints as something else: < as an inverted
    # exclamation mark, > as an inverted question mark, | as an em dash, " as a closing quote
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\texttt{\char34}",  # OT1 has no \textquotedbl: the typewriter font's straight quote
    "`": r"\textasciigrave{}",
    # a cell that starts with [ after the \\ of the row above would be read as the \\'s argument
    "[": "{[}",
    "]": "{]}",
    # the symbols evalstore itself writes, which pdflatex's UTF-8 input does not know
    "Δ": r"$\Delta$",
    "▲": r"$\uparrow$",
    "▼": r"$\downarrow$",
    "±": r"$\pm$",
    "−": r"$-$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "α": r"$\alpha$",
    "τ": r"$\tau$",
    "ρ": r"$\rho$",
    "χ": r"$\chi$",
    "…": r"\ldots{}",
}
#: TeX's ligatures of text characters: -- and --- (dashes), '' (a closing quote), ,, (T1: a low
#: quote); a {} between the two characters keeps them apart
_LIGATURE = re.compile(r"([-',])(?=[-',])")


def tex_escape(text: Any) -> str:
    """LaTeX text: printable, every character that LaTeX would not print as itself escaped (its
    special characters; ``<``, ``>``, ``|``, ``"`` of the default font encoding; ``[`` that would
    be read as the argument of a row's ``\\\\``; the symbols evalstore writes, such as Δ and ▲)
    and TeX's ligatures (``--``, ``''``) kept apart. The one escaping function of the LaTeX writer:
    every name, title, caption and cell passes through it."""
    escaped = "".join(_TEX.get(c, c) for c in printable(text))
    return _LIGATURE.sub(r"\1{}", escaped)


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


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in its number: ``1 row``, ``2 rows``, ``0 rows`` (``plural``: when not
    the noun and an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"

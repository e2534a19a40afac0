"""ir_measures' spellings of measures that evalstore stores under another name, as aliases.

* ``NumRet(rel=r)`` is ``NumRelRet(rel=r)`` (ir_measures' ``NumRelRet`` prints as ``NumRet(rel=1)``);
* ``SetP(relative=True)`` is ``SetRelP`` (ir_measures' ``SetRelP``); ``relative=False`` is SetP;
* ``Name(...)@10,20`` is the list ``Name(...)@10``, ``Name(...)@20``;
* aliases of the names themselves (``MAP``, ``NDCG``, ``BPref``, ``RPrec``, ``MRR``, ``Precision``,
  ``Recall``, ``alpha_*`` spelt with a Greek alpha) are declared with the metrics.
"""

from __future__ import annotations

import re

from ..params import parse_bool, split_params
from ..registry import alias

_PARAMS = r"\((?P<params>[^()]*)\)"
_CUT = r"(?P<cut>@[0-9.]+)?"


def _without(params: str, name: str) -> tuple[list[str], str | None]:
    """The parameters other than ``name``, and the value of ``name`` (None when absent)."""
    kept, value = [], None
    for item in split_params(params):
        k, _, v = item.partition("=")
        if k.strip() == name:
            value = v.strip()
        else:
            kept.append(item)
    return kept, value


def _call(name: str, params: list[str], cut: str | None) -> str:
    return name + (f"({','.join(params)})" if params else "") + (cut or "")


def _numret(m: re.Match) -> str:
    kept, rel = _without(m.group("params"), "rel")
    if rel is None:
        return _call("NumRet", kept, m.group("cut"))
    return _call("NumRelRet", [*kept, f"rel={rel}"], m.group("cut"))


def _setp(m: re.Match) -> str:
    kept, relative = _without(m.group("params"), "relative")
    target = m.group("name")
    if relative is not None:
        target = "SetRelP" if parse_bool(relative, f"{m.group(0)}: relative") else "SetP"
    return _call(target, kept, m.group("cut"))


def _cutoffs(m: re.Match) -> list[tuple[str, str]]:
    base = m.group("base")
    names = [f"{base}@{c.strip()}" for c in m.group("list").split(",")]
    return [(n, n) for n in names]


alias(rf"NumRet{_PARAMS}{_CUT}", _numret)
alias(rf"(?P<name>SetP|SetRelP){_PARAMS}{_CUT}", _setp)
alias(r"(?P<base>[A-Za-z][^@]*)@(?P<list>[0-9.]+(?:\s*,\s*[0-9.]+)+)", _cutoffs)

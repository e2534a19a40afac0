"""trec_eval's names for the measures of the trec_eval family (:mod:`.trec`), as aliases.

trec_eval names are accepted as written and echoed back in results:

* ``map``, ``gm_map``, ``Rprec``, ``bpref``, ``gm_bpref``, ``infAP``, ``recip_rank``, ``ndcg``,
  ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``, ``set_P``, ``set_recall``,
  ``set_F``, ``set_map``, ``set_relative_P``, ``utility``, ``11pt_avg``;
* with a cutoff: ``P_10`` or ``P.10``, and likewise ``recall``, ``ndcg_cut``, ``map_cut``,
  ``success``, ``relative_P``, ``unj``; a list expands (``P.5,10`` -> ``P_5``, ``P_10``) and the
  bare name expands to trec_eval's default cutoffs (``P`` -> ``P_5`` ... ``P_1000``);
* with a level: ``iprec_at_recall_0.10`` (``iprec_at_recall..1,.2``, bare = the 11 levels),
  ``Rprec_mult_0.20`` (bare = 0.2, 0.4, ..., 2.0), ``set_F.0.5`` (beta),
  ``utility.2,-1,0,0``, ``11pt_avg..25,.5,.75``, ``ndcg.1=3,2=9`` (gains of the listed levels,
  the others keep gain = level, as in trec_eval);
* nicknames ``official`` and ``all_trec`` expand to every implemented measure of that set;
* any of these may carry parameters: ``map(rel=2)``, ``P_10(rel=2,judged_only=true)``.

Also ir_measures' ``IPrec@0.1``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...errors import MetricError
from ..registry import alias, get

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)"
_LIST = rf"(?:[._](?P<list>{_NUM}(?:,{_NUM})*))?"
_PARAMS = r"(?:\((?P<params>[^()]*)\))?"
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# trec_eval name -> (target metric, fn(list text or None, user params or None) -> [(name, display)])
_EXPANDERS: dict[str, tuple[str, Callable[[str | None, str | None], list[tuple[str, str]]]]] = {}


def _name(target: str, fixed: dict | None, user: str | None, cutoff: int | None = None) -> str:
    items = [p.strip() for p in (user or "").split(",") if p.strip()]
    items += [f"{k}={v}" for k, v in (fixed or {}).items()]
    return target + (f"({','.join(items)})" if items else "") + (f"@{cutoff}" if cutoff is not None else "")


def _suffix(user: str | None) -> str:
    return f"({user})" if user else ""


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _te(te: str, target: str, tail: str, fn) -> None:
    """Register trec_eval name ``te`` (regex ``te + tail + (params)``) expanding through ``fn``.

    A single result keeps the name as the user wrote it; several print as trec_eval prints them."""
    _EXPANDERS[te] = (target, fn)

    def expand(m: re.Match):
        groups = m.groupdict()
        items = fn(groups.get("list"), groups.get("params"))
        return items if len(items) > 1 else [items[0][0]]

    alias(rf"{re.escape(te)}{tail}{_PARAMS}", expand)


def _simple(te: str, target: str) -> None:
    _te(te, target, "", lambda lst, user: [(_name(target, None, user), te + _suffix(user))])


def _with_cutoffs(te: str, target: str, defaults=DEFAULT_CUTOFFS) -> None:
    """``te_10``, ``te.10``, ``te.5,10`` and bare ``te`` (trec_eval's default cutoffs). trec_eval reads
    cutoffs with atol (23.4 -> 23) and sorts them."""

    def fn(lst, user):
        ks = sorted({int(float(x)) for x in _items(lst)}) if lst else list(defaults)
        if not ks or ks[0] < 1:
            raise MetricError(f"{te}: cutoffs must be positive integers, e.g. {te}.5,10")
        return [(_name(target, None, user, k), f"{te}_{k}{_suffix(user)}") for k in ks]

    _te(te, target, _LIST, fn)


def _with_levels(te: str, target: str, param: str, defaults) -> None:
    """``te_0.10``, ``te.0.1``, ``te..1,.2`` and bare ``te`` (defaults); several print as ``te_0.10``."""

    def fn(lst, user):
        vals = sorted({float(x) for x in _items(lst)}) if lst else list(defaults)
        return [(_name(target, {param: repr(v)}, user), f"{te}_{v:.2f}{_suffix(user)}") for v in vals]

    _te(te, target, _LIST, fn)


for _t, _target in [
    ("map", "AP"),
    ("gm_map", "GM_AP"),
    ("gm_bpref", "GM_Bpref"),
    ("recip_rank", "RR"),
    ("num_ret", "NumRet"),
    ("num_rel", "NumRel"),
    ("num_rel_ret", "NumRelRet"),
    ("num_nonrel_judged_ret", "NumNonrelJudgedRet"),
    ("set_P", "SetP"),
    ("set_recall", "SetR"),
    ("set_map", "SetAP"),
    ("set_relative_P", "SetRelP"),
    ("Rprec", "Rprec"),
    ("bpref", "Bpref"),
    ("infAP", "infAP"),
]:
    _simple(_t, _target)
for _t, _target in [("P", "P"), ("recall", "R"), ("ndcg_cut", "nDCG"), ("map_cut", "AP"), ("relative_P", "RelP")]:
    _with_cutoffs(_t, _target)
_with_cutoffs("success", "Success", (1, 5, 10))
_with_cutoffs("unj", "Unj", (5, 10, 20))
_with_levels("iprec_at_recall", "IPrec", "recall", IPREC_LEVELS)
_with_levels("Rprec_mult", "RprecMult", "mult", RPREC_MULTS)

# set_F.0.5 / set_F_0.5: beta
_te(
    "set_F",
    "SetF",
    rf"(?:[._](?P<list>{_NUM}))?",
    lambda lst, user: [(_name("SetF", {"beta": lst} if lst else None, user), "set_F" + _suffix(user))],
)


def _utility(lst, user):
    """utility.2,-1,0,0: the coefficients a, b, c, d."""
    vals = _items(lst) if lst else []
    if lst is not None and len(vals) != 4:
        raise MetricError(f"utility.{lst}: utility takes 4 coefficients a,b,c,d (e.g. utility.1,-1,0,0), as trec_eval")
    return [(_name("Utility", dict(zip("abcd", vals)), user), "utility" + _suffix(user))]


_te("utility", "Utility", _LIST, _utility)
# 11pt_avg..25,.5,.75: recall levels
_te(
    "11pt_avg",
    "11pt_avg",
    _LIST,
    lambda lst, user: [
        (
            _name("11pt_avg", {"levels": ":".join(repr(float(x)) for x in _items(lst))} if lst else None, user),
            "11pt_avg" + _suffix(user),
        )
    ],
)


def _ndcg(lst, user):
    """ndcg.1=3,2=9,4=4.5: the listed levels get the listed gains, the others keep gain = level (trec_eval)."""
    if not lst:
        return [(_name("nDCG", None, user), "ndcg" + _suffix(user))]
    given: dict[int, float] = {}
    for item in _items(lst):
        level, _, gain = item.partition("=")
        if int(level) < 1:
            raise MetricError(
                f"ndcg.{lst}: a gain for level {level} cannot be expressed; evalstore's gains= covers "
                f"levels 1..n (grades <= 0 have gain 0)"
            )
        given[int(level)] = float(gain)
    gains = ":".join(repr(given.get(lv, float(lv))) for lv in range(1, max(given) + 1))
    return [(_name("nDCG", {"gains": gains}, user), "ndcg" + _suffix(user))]


_te("ndcg", "nDCG", rf"(?:[._](?P<list>\d+={_NUM}(?:,\d+={_NUM})*))?", _ndcg)

# ir_measures' IPrec@0.1
alias(rf"IPrec{_PARAMS}@(?P<level>{_NUM})", lambda m: _name("IPrec", {"recall": m.group("level")}, m.group("params")))

# trec_eval's nicknames, restricted to what evalstore implements, in trec_eval's print order
OFFICIAL = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
# all_trec: the official set, then the rest in trec_eval's print order
ALL_TREC = OFFICIAL + (
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "ndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "unj",
)


def _nickname(names: tuple[str, ...]):
    """Expand a nickname; its parameters go to the measures that take them (rel= skips ndcg, ...)."""

    def expand(m: re.Match):
        user = m.group("params")
        out = []
        for te in names:
            target, fn = _EXPANDERS[te]
            spec = get(target)
            mine = ",".join(p for p in _items(user or "") if spec.param(p.partition("=")[0].strip()) is not None)
            out.extend(fn(None, mine or None))
        return out

    return expand


alias(rf"official{_PARAMS}", _nickname(OFFICIAL))
alias(rf"all_trec{_PARAMS}", _nickname(ALL_TREC))

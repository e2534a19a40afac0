"""trec_eval's measures (sql/trec_eval.sql).

Every measure follows trec_eval 10.0 (usnistgov/trec_eval, tag v10.0: the m_*.c files); the
definitions are restated in the header of ``sql/trec_eval.sql``, and
``tests/conformance/test_trec_eval.py`` checks them against trec_eval's own output. trec_eval's flags
map onto parameters and options: ``-l L`` -> ``rel=L``, ``-J`` -> ``judged_only=true``, ``-c`` ->
``complete=True``, ``-M n`` -> ``depth=n``, ``-N n`` -> ``Utility(num_docs=n)``.

trec_eval's own names (``map``, ``P_10``, ``ndcg_cut.10``, ``official``, ...) are aliases declared in
:mod:`.trec_names`.
"""

from __future__ import annotations

from typing import Any

from ...errors import MetricError
from ..params import JUDGED_ONLY, REL, Param
from ..registry import MetricSpec, register

TREC = "trec_eval 10.0 (usnistgov/trec_eval, the m_*.c file of the measure)"
BIN = (REL, JUDGED_ONLY)

# nDCG takes any gains, as trec_eval's ndcg does (levels given in any order, 0 or negative gains
# allowed: trec_eval -m ndcg.1=3,2=9,4=4.5 gives gains 3, 9, 3, 4.5).
NDCG_GAINS = Param(
    "gains",
    "floats",
    None,
    "gains of levels 1..n, e.g. 1:2:3 or 3:9:3:4.5 (default: gain = grade, or the qrels set's "
    "declared gains); any values, as trec_eval's ndcg.1=g1,2=g2 allows",
)
ROUNDING = Param(
    "rounding",
    "str",
    None,
    "recall level -> number of relevant docs: v10 = lround(p*R) (trec_eval 10), "
    "v9 = (long)(p*R + 0.9) (trec_eval 9.0.x, pytrec_eval 0.5); default: v9 under the trec_eval9 and "
    "ir_measures conventions, else v10",
    choices=("v10", "v9"),
)


def _need_recall(values: dict) -> None:
    if values.get("recall") is None:
        raise MetricError(
            "IPrec needs a recall level, e.g. IPrec@0.1 or IPrec(recall=0.1) (trec_eval iprec_at_recall_0.10)"
        )
    if not 0.0 <= values["recall"] <= 1.0:
        raise MetricError(f"IPrec: the recall level must be between 0 and 1, not {values['recall']}")


def _need_mult(values: dict) -> None:
    if values.get("mult") is None or values["mult"] <= 0:
        raise MetricError(
            "RprecMult needs a positive multiple of R, e.g. RprecMult(mult=0.2) (trec_eval Rprec_mult_0.20)"
        )


def _check_levels(values: dict) -> None:
    levels = values.get("levels")
    if levels is not None and (not levels or any(not 0.0 <= p <= 1.0 for p in levels)):
        raise MetricError("11pt_avg: levels must be recall levels between 0 and 1, e.g. levels=0.2:0.5:0.8")


# trec_eval's base names, listed as aliases (``evalstore metrics`` shows them); the forms with
# cutoffs, levels and parameters (P_10, iprec_at_recall_0.10, utility.2,-1,0,0) are the alias() patterns below.
TREC_NAMES = {
    "AP": ("map", "map_cut", "MAP"),
    "GM_AP": ("gm_map",),
    "RelP": ("relative_P",),
    "RprecMult": ("Rprec_mult",),
    "RR": ("recip_rank",),
    "nDCG": ("ndcg_cut",),
    "GM_Bpref": ("gm_bpref",),
    "IPrec": ("iprec_at_recall",),
    "NumRet": ("num_ret",),
    "NumRel": ("num_rel",),
    "NumRelRet": ("num_rel_ret",),
    "NumNonrelJudgedRet": ("num_nonrel_judged_ret",),
    "SetP": ("set_P",),
    "SetR": ("set_recall",),
    "SetF": ("set_F",),
    "SetAP": ("set_map",),
    "SetRelP": ("set_relative_P",),
    "Unj": ("unj",),
}


def _ndcg_provider(params: dict, cutoff: int | None) -> str:
    if params.get("dcg") == "exp-log2":
        return "gdeval" if cutoff is not None else "ranx"
    return "pytrec_eval"


#: ir_measures' default provider of the measures it shares with trec_eval (None: not in ir_measures).
IRM_PROVIDER: dict[str, Any] = {
    **{n: "pytrec_eval" for n in ("AP", "P", "R", "Success", "Rprec", "Bpref", "infAP", "IPrec", "NumRet")},
    **{n: "pytrec_eval" for n in ("NumRel", "NumRelRet", "SetP", "SetR", "SetF", "SetAP", "SetRelP")},
    "RR": lambda p, k: "msmarco" if k is not None else "pytrec_eval",
    "nDCG": _ndcg_provider,
    "DCG": lambda p, k: "ranx",
}


def _spec(name, block, doc, source, params=BIN, aliases=(), **kw):
    return register(
        MetricSpec(
            name,
            f"trec_eval.sql#{block}",
            doc,
            f"{TREC} {source}",
            params,
            aliases=tuple(aliases) + TREC_NAMES.get(name, ()),
            provider=IRM_PROVIDER.get(name),
            **kw,
        )
    )


_spec(
    "AP",
    "AP",
    "Average precision: sum over the relevant docs retrieved of the precision at their rank, divided by R "
    "(unretrieved relevant docs add 0). With @k: trec_eval's map_cut (ranks <= k, still divided by R).",
    "m_map.c, m_map_cut.c; Sakai, IPSJ TOD 2007, Eq. 1",
    cutoff="optional",
)
_spec(
    "GM_AP",
    "AP",
    "AP per topic, summarised by the geometric mean exp(mean ln max(AP, 1e-5)) (trec_eval gm_map).",
    "m_gm_map.c, meas_avg.c; Robertson 2006 (GMAP)",
    cutoff="optional",
    aggregate="gmean",
)
_spec(
    "P",
    "P",
    "Precision at k: relevant docs in the top k divided by k (always k, even when fewer are retrieved).",
    "m_P.c",
    aliases=("Precision",),
    cutoff="required",
)
_spec(
    "R",
    "R",
    "Recall at k: relevant docs in the top k divided by R (0 when R = 0).",
    "m_recall.c",
    cutoff="required",
    aliases=("Recall",),
)
_spec(
    "RelP",
    "RelP",
    "Relative precision at k: relevant docs in the top k divided by min(k, R) (trec_eval relative_P).",
    "m_rel_P.c",
    cutoff="required",
)
_spec("Success", "Success", "1 if a relevant doc is in the top k, else 0.", "m_success.c", cutoff="required")
_spec(
    "Rprec", "Rprec", "R-precision: relevant docs in the top R divided by R.", "m_Rprec.c", aliases=("R-prec", "RPrec")
)
_spec(
    "RprecMult",
    "RprecMult",
    "Precision at rank c = (long)(mult*R + 0.9) (trec_eval Rprec_mult; truncation as in trec_eval 10); 0 if c = 0.",
    "m_Rprec_mult.c",
    (REL, JUDGED_ONLY, Param("mult", "float", None, "multiple of R, e.g. 0.2")),
    check=_need_mult,
)
_spec(
    "RR",
    "RR",
    "Reciprocal rank of the first relevant doc (0 if none); @k: only within the top k.",
    "m_recip_rank.c",
    cutoff="optional",
    aliases=("MRR",),
)
DCG_FORM = Param(
    "dcg",
    "str",
    "log2",
    "gain form: log2 = the gain itself (trec_eval), exp-log2 = 2^gain - 1 (Burges et al.; gdeval); discount "
    "1/log2(r+1) in both",
    choices=("log2", "exp-log2"),
)
_spec(
    "nDCG",
    "nDCG",
    "Normalised DCG: linear gain (the grade, or gains=), discount log2(r+1), over the whole list; the ideal list "
    "holds every judged doc with gain > 0 and is not truncated to the run's length. @k truncates both (trec_eval "
    "ndcg_cut). Ignores rel (trec_eval -l does not affect ndcg). dcg='exp-log2': gains 2^g - 1 (gdeval's nDCG@k, "
    "ranx's ndcg_burges).",
    "m_ndcg.c, m_ndcg_cut.c; Jarvelin & Kekalainen 2002 (Microsoft/Burges discount); gdeval.pl 1.2a",
    (NDCG_GAINS, JUDGED_ONLY, DCG_FORM),
    cutoff="optional",
    aliases=("NDCG",),
)
_spec(
    "DCG",
    "DCG",
    "Discounted cumulated gain, unnormalised: sum over ranks <= k of gain/log2(r+1), with the gain itself "
    "(dcg='log2', trec_eval's gains) or 2^gain - 1 (dcg='exp-log2').",
    "Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005; ranx dcg, dcg_burges",
    (NDCG_GAINS, JUDGED_ONLY, DCG_FORM),
    cutoff="optional",
)
_spec(
    "Bpref",
    "Bpref",
    "trec_eval's bpref: (1/R) sum over relevant retrieved docs of 1 - min(m, R)/min(N, R), m = judged nonrelevant "
    "docs above it, N = judged nonrelevant docs; unjudged docs are ignored.",
    "m_bpref.c; Buckley & Voorhees, SIGIR 2004",
    aliases=("BPref",),
)
_spec(
    "GM_Bpref",
    "Bpref",
    "Bpref per topic, summarised by the geometric mean (floor 1e-5) (trec_eval gm_bpref).",
    "m_gm_bpref.c, meas_avg.c",
    aggregate="gmean",
)
_spec(
    "infAP",
    "infAP",
    "Inferred AP as trec_eval computes it: qrels grades < 0 mark docs in the pool but unjudged; docs not in the "
    "qrels are outside the pool (epsilon 1e-5). Equals AP when every retrieved doc is judged.",
    "m_infap.c; Yilmaz & Aslam, CIKM 2006",
)
_spec(
    "IPrec",
    "IPrec",
    "Interpolated precision at recall level p: the best precision at or after the rank where lround(p*R) relevant "
    "docs have been retrieved (0 if never). Write IPrec@0.1 or IPrec(recall=0.1).",
    "m_iprec_at_recall.c",
    (REL, JUDGED_ONLY, Param("recall", "float", None, "recall level p in [0, 1]"), ROUNDING),
    check=_need_recall,
)
_spec(
    "11pt_avg",
    "11pt_avg",
    "Mean interpolated precision over recall levels (default the 11 levels 0, 0.1, ..., 1).",
    "m_11pt_avg.c",
    (
        REL,
        JUDGED_ONLY,
        Param("levels", "floats", None, "recall levels, e.g. 0.2:0.5:0.8 (default 0:0.1:...:1)"),
        ROUNDING,
    ),
    check=_check_levels,
)
_spec(
    "NumRet",
    "NumRet",
    "Number of documents retrieved (after depth / judged_only); summed over topics.",
    "m_num_ret.c",
    (JUDGED_ONLY,),
    cutoff="optional",
    aggregate="sum",
)
_spec(
    "NumRel",
    "NumRel",
    "Number of relevant documents in the qrels (R); summed over topics.",
    "m_num_rel.c",
    (REL,),
    aggregate="sum",
)
_spec(
    "NumRelRet",
    "NumRelRet",
    "Number of relevant documents retrieved; summed over topics.",
    "m_num_rel_ret.c",
    cutoff="optional",
    aggregate="sum",
)
_spec(
    "NumNonrelJudgedRet",
    "NumNonrelJudgedRet",
    "Number of judged nonrelevant documents retrieved (0 <= grade < rel); summed over topics.",
    "m_num_nonrel_judged_ret.c",
    aggregate="sum",
)
_spec("SetP", "SetP", "Set precision: relevant retrieved / retrieved.", "m_set_P.c")
_spec("SetR", "SetR", "Set recall: relevant retrieved / R.", "m_set_recall.c")
_spec(
    "SetF",
    "SetF",
    "Set F: (beta+1) P R / (beta P + R) over the retrieved set; beta is NOT squared (trec_eval set_F).",
    "m_set_F.c; van Rijsbergen 1979",
    (REL, JUDGED_ONLY, Param("beta", "float", 1.0, "weight of recall (not squared)")),
)
_spec(
    "SetAP",
    "SetAP",
    "Set average precision: SetP * SetR = relevant retrieved^2 / (retrieved * R) (trec_eval set_map).",
    "m_set_map.c",
)
_spec("SetRelP", "SetRelP", "Relevant retrieved / min(retrieved, R) (trec_eval set_relative_P).", "m_set_rel_P.c")
_spec(
    "Utility",
    "Utility",
    "Set utility a*RelRet + b*NonrelRet + c*RelNotRet + d*NonrelNotRet (NonrelNotRet needs num_docs, trec_eval -N); "
    "0 for a topic the run retrieves nothing for. Averaged over topics as trec_eval does.",
    "m_utility.c",
    (
        REL,
        JUDGED_ONLY,
        Param("a", "float", 1.0, "worth of a relevant retrieved doc"),
        Param("b", "float", -1.0, "worth of a nonrelevant retrieved doc"),
        Param("c", "float", 0.0, "worth of a relevant doc not retrieved"),
        Param("d", "float", 0.0, "worth of a nonrelevant doc not retrieved"),
        Param("num_docs", "int", 0, "collection size (trec_eval -N)"),
    ),
)
_spec(
    "Unj",
    "Unj",
    "Fraction of the top k that is unjudged (not in the qrels, or qrels grade < 0); denominator k.",
    "m_unjudged.c",
    (JUDGED_ONLY,),
    cutoff="required",
)

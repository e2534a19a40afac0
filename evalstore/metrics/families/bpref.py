"""The bpref / rpref family (sql/bpref.sql): Sakai, "Alternatives to Bpref", SIGIR 2007.

All of them are condensed-list measures: they read the judged documents only, in rank order, with
or without ``judged_only`` (which they therefore do not take). trec_eval's own ``Bpref`` (= bpref_R
when R <= N, = bpref_N when R >= N) and ``infAP`` live in the trec_eval family.
"""

from ..params import GAINS, REL
from ..registry import MetricSpec, register

SAKAI = "Sakai, Alternatives to Bpref, SIGIR 2007"
NTCIR = "NTCIREVAL 190111 `compute -j`"

register(
    MetricSpec(
        "bpref_R",
        "bpref.sql#bpref_R",
        "bpref with the R-normalisation: (1/R) sum over retrieved relevant docs of 1 - min(R, n)/R, n = judged "
        "nonrelevant docs above it. Equals bpref when R <= N.",
        f"{SAKAI} Eq. 10; {NTCIR} bpref_R",
        (REL,),
    )
)
register(
    MetricSpec(
        "bpref_N",
        "bpref.sql#bpref_N",
        "bpref with the N-normalisation: (1/R) sum over retrieved relevant docs of 1 - n/N. Equals bpref when R >= N "
        "(trec_eval 8.1 bpref_allnonrel).",
        f"{SAKAI} Eq. 11; {NTCIR} bpref_N; trec_eval 8.1 bpref_allnonrel",
        (REL,),
        aliases=("bpref_allnonrel",),
    )
)
register(
    MetricSpec(
        "bpref_relative",
        "bpref.sql#bpref_relative",
        "De Beer & Moens' relative normalisation: (1/R) sum over relevant docs at condensed rank r' > 1 of "
        "1 - n/(r'-1). A relevant doc at rank 1 adds 0; an ideal list scores (R-1)/R.",
        f"{SAKAI} Eq. 18; {NTCIR} bpref_relative",
        (REL,),
    )
)
register(
    MetricSpec(
        "bpref_relative2",
        "bpref.sql#bpref_relative2",
        "Sakai's fix of bpref_relative (r' instead of r'-1): (1/R) sum over relevant docs of count(r')/r', "
        "i.e. AP on the condensed list (AP', induced AP).",
        f"{SAKAI} Eq. 20",
        (REL,),
    )
)
register(
    MetricSpec(
        "old_bpref",
        "bpref.sql#old_bpref",
        "trec_eval 8.1's 'buggy' bpref: normalised by min(R, N_ret), N_ret = judged nonrelevant docs retrieved, "
        "instead of min(R, N).",
        f"{SAKAI} Sec. 4.1 (trec_eval 8.1 file bpref_bug)",
        (REL,),
    )
)
register(
    MetricSpec(
        "rpref_N",
        "bpref.sql#rpref_N",
        "Graded bpref_N (De Beer & Moens): (1/cg_I(R)) sum over retrieved docs with gain > 0 of "
        "g(r')(1 - penalty(r')/(R + N - cg_I(R)/gain(H))), penalty = sum over judged docs above with lower gain of "
        "(g(r') - g(i'))/g(r'); gain(H) = the top declared gain.",
        f"{SAKAI} Eqs. 15-16; {NTCIR} rpref_N",
        (GAINS,),
    )
)
register(
    MetricSpec(
        "rpref_relative",
        "bpref.sql#rpref_relative",
        "Graded bpref_relative: (1/cg_I(R)) sum over docs with gain > 0 at condensed rank r' > 1 of "
        "g(r')(1 - penalty(r')/(r'-1)); an ideal list scores (cg_I(R) - g_I(1))/cg_I(R).",
        f"{SAKAI} Eq. 17; {NTCIR} rpref_relative",
        (GAINS,),
    )
)
register(
    MetricSpec(
        "rpref_relative2",
        "bpref.sql#rpref_relative2",
        "Graded bpref_relative2: (1/cg_I(R)) sum over docs with gain > 0 of g(r')(1 - penalty(r')/r'); "
        "an ideal list scores 1.",
        f"{SAKAI} Eq. 19; {NTCIR} rpref_relative2",
        (GAINS,),
    )
)

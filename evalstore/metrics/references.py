"""Reference tools: which tool each metric's values agree with, and how each tool orders a run.

Every metric names the tool whose numbers it reproduces (``MetricSpec.reference``; shown by
``evalstore metrics NAME``) and, when ir_measures has the measure, the provider ir_measures 0.4.3
computes it with by default (``MetricSpec.provider``). Under the ``ir_measures`` convention each
metric is computed with the conventions of that provider: its order of tied scores, and gdeval's
rounding to 5 decimals. The tie orders were established on ir_measures' own outputs for
runs with tied scores (tests/conformance/test_ir_measures.py).
"""

from __future__ import annotations

from dataclasses import dataclass

#: How a run's documents are ordered for evaluation. ``{line}`` is the file-order column.
ORDERS: dict[str, str] = {
    # score descending, ties by docno descending, scores in double precision (trec_eval 10; the
    # stored rank of every run row)
    "trec_eval": "score DESC, doc DESC",
    # the same with the scores read as single-precision floats (trec_eval <= 9.0.8, pytrec_eval)
    "float32": "score::FLOAT DESC, doc DESC",
    # score descending, ties by docno ascending (pyndeval, ir_measures' msmarco, judged, compat)
    "docno_asc": "score DESC, doc ASC",
    # score descending, ties in file order (a stable sort: cwl_eval, ir_measures' accuracy)
    "score_file": "score DESC, {line}",
    # file order, scores ignored (NTCIREVAL)
    "file": "{line}",
}


@dataclass(frozen=True)
class Reference:
    """A reference tool: its name as users know it, what exactly was compared, its tie order."""

    name: str
    tool: str
    order: str
    digits: int | None = None  # values printed with this many decimals (gdeval's %.5f)
    pads: bool = True  # ir_measures gives a qrels topic the run lacks the value 0 (accuracy does not)


REFERENCES: dict[str, Reference] = {
    r.name: r
    for r in (
        Reference(
            "trec_eval", "trec_eval 10.0 (usnistgov/trec_eval); 9.0.8 under --convention trec_eval9", "trec_eval"
        ),
        Reference("NTCIREVAL", "NTCIREVAL 190111 (Sakai)", "file"),
        Reference("evalstore", "no reference tool: the paper's worked examples and hand-computed cases", "trec_eval"),
        Reference("nuggetizer", "nuggetizer 0.0.5's calculate_nugget_scores (castorini/nuggetizer)", "trec_eval"),
        # ir_measures 0.4.3's providers
        Reference("pytrec_eval", "ir_measures 0.4.3 via pytrec_eval (trec_eval 9.0.8)", "float32"),
        Reference("gdeval", "ir_measures 0.4.3 via gdeval.pl 1.2a (values printed with 5 decimals)", "trec_eval", 5),
        Reference("cwl_eval", "ir_measures 0.4.3 via cwl_eval 1.0.12 (C/W/L framework)", "score_file"),
        Reference("pyndeval", "ir_measures 0.4.3 via pyndeval 0.0.8 (ndeval 4.5)", "docno_asc"),
        Reference("msmarco", "ir_measures 0.4.3's msmarco provider (MS MARCO's MRR@k)", "docno_asc"),
        Reference("judged", "ir_measures 0.4.3's judged provider", "docno_asc"),
        Reference("compat", "ir_measures 0.4.3's compat provider (Clarke et al., compatibility)", "docno_asc"),
        Reference("accuracy", "ir_measures 0.4.3's accuracy provider", "score_file", pads=False),
        Reference(
            "trectools", "ir_measures 0.4.3 via trectools 0.0.50 (outside ir_measures' default pipeline)", "score_file"
        ),
        Reference("ranx", "ir_measures 0.4.3 via ranx 0.3.21", "score_file"),
    )
}


#: The --convention under which a reference tool's numbers are reproduced (None: the default).
CONVENTION_OF = {"NTCIREVAL": "ntcireval", "pytrec_eval": "trec_eval9"}


def agreement(name: str) -> str:
    """What a metric whose values reproduce the reference ``name`` agrees with, and under which
    convention: tools that order tied scores otherwise than trec_eval (or round) agree only under
    their convention, which ``evalstore metrics NAME`` must say."""
    ref = REFERENCES[name]
    convention = CONVENTION_OF.get(name)
    if convention is None and (ref.order != "trec_eval" or ref.digits is not None):
        convention = "ir_measures"
    if convention is None:
        return ref.tool
    return f"{ref.tool}, under --convention {convention} (with the default convention, values differ on tied scores)"


def order_clause(order: str, line: str = "line_no") -> str:
    """The ORDER BY list that ranks a run's rows in ``order`` (``line``: the file-order column)."""
    return ORDERS[order].format(line=line)

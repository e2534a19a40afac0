"""The one rule for the qrels set a command uses when none is named (``--qrels`` left out).

Every command that reads one judged set (``eval``, ``compare``, ``explain``, ``repro``,
``design``, ``subsample``, ``meta ...``) applies :func:`default_qrels`:

1. The candidates are the store's judged sets that are not subsamples (a subsample is derived
   from a set; it is named, never taken by default).
2. When the store holds both sets with subtopic (diversity) judgments and sets without, and the
   command knows its metrics: the diversity metrics (those that read subtopic judgments, such as
   ``alpha_nDCG@20``) look among the sets with subtopic judgments, every other metric among the
   sets without. Metrics of both kinds together need a named set.
3. Exactly one candidate left: it is the default. None or several: an error that lists them and
   says to choose one with ``--qrels NAME``.

So a store with one qrels set (and its subsamples) never needs ``--qrels``; a TREC Web track
store with an ad hoc set and a diversity set takes the ad hoc set for ``nDCG@20`` and the
diversity set for ``alpha_nDCG@20``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError
from ..metrics.registry import parse_metric

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: The rule in one line, for the help of the ``--qrels`` options.
HELP = (
    "default: the store's only qrels set, subsamples aside; with sets both with and without subtopic "
    "judgments, the only one of the kind the metrics read"
)


def reads_subtopics(metric: str) -> bool:
    """True when every instance of ``metric`` reads subtopic judgments (a diversity metric)."""

    return all("rl_subtopics" in i.spec.block.reads for i in parse_metric(metric))


def default_qrels(store: StoreHandle, metrics: Sequence[str] | None = None, option: str = "--qrels") -> str:
    """The qrels set a command uses when none is named (see the module docstring); ``option``
    names the option to give in the error."""
    rows = store.con.execute(
        "SELECT m.name, EXISTS (SELECT 1 FROM subtopic_qrels_data s WHERE s.qrels_id = m.qrels_id) "
        "FROM qrels_meta m WHERE NOT EXISTS (SELECT 1 FROM subsample_meta sm WHERE sm.qrels_id = m.qrels_id) "
        "ORDER BY m.name"
    ).fetchall()
    if not rows:
        raise StoreError("the store holds no qrels set; ingest one with `evalstore ingest qrels FILE`")
    if len(rows) == 1:
        return str(rows[0][0])
    candidates, kind, why = [str(n) for n, _ in rows], "", ""
    if metrics and len({bool(d) for _, d in rows}) == 2:
        diversity = {reads_subtopics(m) for m in metrics}
        if len(diversity) == 1:
            wanted = diversity.pop()
            candidates = [str(n) for n, d in rows if bool(d) == wanted]
            kind = " with subtopic judgments" if wanted else " without subtopic judgments"
            if len(candidates) == 1:
                return candidates[0]
        else:
            why = " (the metrics read both kinds: sets with and without subtopic judgments)"
    shown = ", ".join(candidates[:10]) + (", ..." if len(candidates) > 10 else "")
    raise StoreError(
        f"the store holds {len(candidates)} qrels sets{kind} ({shown}){why}, and {option} was not given: "
        f"choose one with {option} NAME"
    )

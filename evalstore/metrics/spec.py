"""A metric's declaration: :class:`MetricSpec` (registered in :mod:`.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import sqlfile
from .answer_lists import kind_of
from .params import Param

if TYPE_CHECKING:
    from .user.definition import UserMeasure


@dataclass(frozen=True)
class MetricSpec:
    """Declaration of one metric.

    ``sql`` is ``'file.sql#block'``: the block ``-- @metric block`` of ``sql/<family>.sql``, a SELECT
    returning ``(qrels_id, run_id, topic, value)`` over the ranked judged list (``rl_judged``, ``rl_topics``,
    ``rl_ideal``, ``rl_qrels``; see ``sql/ranked_list.sql``) with ``${param}`` placeholders.
    CTEs that several blocks of one file share are written once as ``-- @fragment NAME`` and
    included as ``${NAME}``.
    ``cutoff``: 'none', 'optional' or 'required' (``${k}``, NULL-free: the engine substitutes
    a very large number when the cutoff is absent and ``cutoff='optional'``).
    """

    name: str
    sql: str
    doc: str
    citation: str
    params: tuple[Param, ...] = ()
    cutoff: str = "none"
    aggregate: str = "mean"  # 'mean', 'gmean' or 'sum'
    aliases: tuple[str, ...] = ()
    missing: float | None = 0.0  # value of an evaluated topic the SQL returns no row for
    check: Callable[[dict], None] | None = None  # extra parameter validation
    #: the tool whose values it reproduces (a key of references.REFERENCES)
    reference: str = "trec_eval"
    #: ir_measures' default provider for this name (a key of references.REFERENCES; a function of
    #: the parameters and the cutoff when it depends on them), None when ir_measures lacks it
    provider: str | Callable[[dict, int | None], str | None] | None = None
    #: a measure of one's own (:mod:`evalstore.metrics.user`): its definition, None for a built-in
    user: UserMeasure | None = None

    @property
    def family(self) -> str:
        return self.sql.split("#")[0]

    @property
    def block(self) -> sqlfile.SqlBlock:
        """The SQL block that computes the metric, with the declarations of the fragments it includes."""
        if self.user is not None:
            return self.user.block
        filename, _, name = self.sql.partition("#")
        return sqlfile.effective_block(filename, name)

    @property
    def kind(self) -> str:
        """The kind of judged set the metric evaluates against: 'judgments' (a ranked list against
        relevance judgments), 'nuggets' (nugget assignments) or 'support' (support labels), from
        the relations its block reads (:func:`evalstore.metrics.answer_lists.kind_of`)."""
        return kind_of(self.block.reads)

    @property
    def needs_pool(self) -> bool:
        """Reads the pooled-but-unjudged rows (grade < 0) that a subsample adds (infAP)."""
        return "pool" in self.block.needs

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

"""Where two runs differ: every topic of a qrels set ranked by how differently the two runs rank
documents, as diffir (MacAvaney et al., SIGIR 2022 demo) does, not by their score difference alone.

Per topic, computed in one SQL statement over the stored ranked lists (``run_row_data``, in
evaluation order) for all topics at once:

* ``rbo``: rank-biased overlap of the two lists cut at ``depth`` documents, with persistence ``p``,
  in repro_eval's normalised truncated form (the RBO of ``evalstore repro``,
  :func:`evalstore.repro.orderings.rbo`): with ``X_d`` the number of documents the two top-``d``
  lists share, ``RBO = sum_{d=1}^{D} p^(d-1) X_d / d / sum_{d=1}^{D} p^(d-1)`` (1: the same top
  ``D``; 0: no document in common);
* ``rbo_ext``: Webber, Moffat and Zobel's extrapolated RBO (TOIS 2010, eq. 23), as the ``rbo``
  package's ``RankingSimilarity(A, B).rbo(p=p, ext=True)`` computes it on the lists cut at
  ``depth``: with ``k = min(|A|, |B|)``, ``(1 - p) sum_{d=1}^{k} p^(d-1) X_d / d + p^k X_k / k``
  (1 for two empty lists, 0 when one is empty);
* ``overlap``: the documents both top-``depth`` lists hold;
* the judged relevant documents (grade > 0) that moved most between the lists (a document outside
  a run's top ``depth`` counts as rank ``depth + 1``), the largest move first;
* with ``metric``: both runs' stored scores on the topic and their difference.

Topics are the judged topics of ``qrels`` that either run retrieved documents for, the most
different (lowest RBO) first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import MetaError
from ..meta.matrix import canonical_metric
from ..output.table import Table
from ..repro.orderings import check_depth, check_p

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

DEFAULT_DEPTH = 100
DEFAULT_P = 0.9
#: relevant documents listed per topic (the largest moves)
MOVES = 3

_SQL = """
WITH a AS (
    SELECT topic, doc, rank FROM run_row_data WHERE run_id = $a AND rank <= $depth
), b AS (
    SELECT topic, doc, rank FROM run_row_data WHERE run_id = $b AND rank <= $depth
), judged AS (
    SELECT topic, doc, grade FROM qrels_data WHERE qrels_id = $q
), judged_topics AS (  -- a set of nugget assignments or support labels judges answers' topics
    SELECT topic FROM judged UNION SELECT topic FROM assigned_answer_data WHERE qrels_id = $q
    UNION SELECT topic FROM support_data WHERE qrels_id = $q
), topics AS (
    SELECT topic FROM (SELECT topic FROM a UNION SELECT topic FROM b)
    WHERE topic IN (SELECT topic FROM judged_topics)
), lengths AS (
    SELECT t.topic, coalesce(la.n, 0) AS len_a, coalesce(lb.n, 0) AS len_b
    FROM topics t
    LEFT JOIN (SELECT topic, count(*) AS n FROM a GROUP BY topic) la USING (topic)
    LEFT JOIN (SELECT topic, count(*) AS n FROM b GROUP BY topic) lb USING (topic)
), w AS (
    SELECT d, pow($p, d - 1) AS w, pow($p, d - 1) / d AS wd FROM range(1, $depth + 2) r(d)
), s AS (  -- S(m) = sum_{d=m}^{depth} p^(d-1) / d; S(depth + 1) = 0
    SELECT d AS m, coalesce(sum(wd) FILTER (WHERE d <= $depth) OVER (ORDER BY d DESC), 0) AS s FROM w
), norm AS (
    SELECT sum(w) AS norm FROM w WHERE d <= $depth
), shared AS (
    SELECT a.topic, greatest(a.rank, b.rank) AS m FROM a JOIN b USING (topic, doc)
), per_topic AS (
    SELECT l.topic, l.len_a, l.len_b, least(l.len_a, l.len_b) AS k,
           count(sh.m) AS overlap,
           coalesce(sum(s1.s), 0) AS sum_s,
           count(sh.m) FILTER (WHERE sh.m <= least(l.len_a, l.len_b)) AS x_k,
           coalesce(sum(s1.s - sk.s) FILTER (WHERE sh.m <= least(l.len_a, l.len_b)), 0) AS sum_sk
    FROM lengths l
    LEFT JOIN shared sh USING (topic)
    LEFT JOIN s s1 ON s1.m = sh.m
    LEFT JOIN s sk ON sk.m = least(l.len_a, l.len_b) + 1
    GROUP BY l.topic, l.len_a, l.len_b
), moves AS (
    SELECT j.topic, j.doc, j.grade, a.rank AS rank_a, b.rank AS rank_b,
           coalesce(b.rank, $depth + 1) - coalesce(a.rank, $depth + 1) AS moved
    FROM judged j LEFT JOIN a USING (topic, doc) LEFT JOIN b USING (topic, doc)
    WHERE j.grade > 0 AND (a.rank IS NOT NULL OR b.rank IS NOT NULL) AND j.topic IN (SELECT topic FROM topics)
), top_moves AS (
    SELECT topic, list({'doc': doc, 'grade': grade, 'rank_a': rank_a, 'rank_b': rank_b, 'moved': moved}
                       ORDER BY abs(moved) DESC, grade DESC, doc)[1:$moves] AS moves,
           max(abs(moved)) AS max_move
    FROM moves WHERE moved <> 0 GROUP BY topic
), sc AS (
    SELECT topic,
           max(value) FILTER (WHERE run_id = $a) AS score_a,
           max(value) FILTER (WHERE run_id = $b) AS score_b
    FROM score_data WHERE qrels_id = $q AND metric = $metric AND run_id IN ($a, $b) GROUP BY topic
)
SELECT p.topic,
       p.sum_s / (SELECT norm FROM norm) AS rbo,
       CASE WHEN p.len_a = 0 AND p.len_b = 0 THEN 1.0 WHEN p.k = 0 THEN 0.0
            ELSE (1 - $p) * p.sum_sk + pow($p, p.k) * p.x_k / p.k END AS rbo_ext,
       p.overlap, p.len_a, p.len_b, coalesce(tm.max_move, 0) AS max_move, coalesce(tm.moves, []) AS moves,
       sc.score_a, sc.score_b
FROM per_topic p LEFT JOIN top_moves tm USING (topic) LEFT JOIN sc USING (topic)
ORDER BY rbo, p.topic
"""


@dataclass
class Contrast:
    """The result of :func:`contrast`: one record per topic, the most different first."""

    qrels: str
    baseline: str
    run: str
    depth: int
    p: float
    metric: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"RBO (repro_eval's normalised truncated form) and RBO_ext (Webber et al.'s extrapolation) of the two "
            f"ranked lists cut at {self.depth} documents, p = {self.p:g}; moves of relevant documents "
            f"(rank in {self.run} − rank in {self.baseline}; outside the top {self.depth}: rank {self.depth + 1})"
        )

    def table(self) -> Table:
        """One row per topic: the contrast, the largest moves, the scores."""
        cols = ["topic", "rbo", "rbo_ext", "overlap", "len_baseline", "len_run", "max_move", "moved_relevant"]
        if self.metric:
            cols += [f"{self.metric} {self.baseline}", f"{self.metric} {self.run}", "difference"]
        rows = []
        for r in self.rows:
            moved = "; ".join(
                f"{m['doc']} (grade {m['grade']}): {_rank(m['rank_a'], self.depth)} -> {_rank(m['rank_b'], self.depth)}"
                for m in r["moves"]
            )
            row = [r["topic"], r["rbo"], r["rbo_ext"], r["overlap"], r["len_a"], r["len_b"], r["max_move"], moved]
            if self.metric:
                row += [r["score_a"], r["score_b"], r["difference"]]
            rows.append(row)
        title = f"where {self.run} and {self.baseline} differ on {self.qrels}"
        return Table(cols, rows, title=title, digits=4, notes=[self.describe()])


def _rank(rank: int | None, depth: int) -> str:
    return str(rank) if rank is not None else f">{depth}"


def contrast(
    store: StoreHandle,
    qrels: str,
    baseline: str,
    run: str,
    *,
    depth: int = DEFAULT_DEPTH,
    p: float = DEFAULT_P,
    metric: str | None = None,
    moves: int = MOVES,
) -> Contrast:
    """Every judged topic of ``qrels`` ranked by how differently ``run`` and ``baseline`` rank
    documents (see the module docstring); one SQL statement for all topics."""

    depth, p = check_depth(depth), check_p(p)
    if baseline == run:
        raise MetaError("contrast two different runs")
    a, b, q = store.run_id(baseline), store.run_id(run), store.qrels_id(qrels)
    stored = None
    if metric:
        stored = canonical_metric(store, qrels, metric)
    rows = store.con.execute(
        _SQL,
        {"a": a, "b": b, "q": q, "depth": depth, "p": p, "metric": stored or "", "moves": int(moves)},
    ).fetchall()
    out = []
    for topic, rbo, ext, overlap, la, lb, max_move, mv, sa, sb in rows:
        out.append(
            {
                "topic": topic,
                "rbo": float(rbo),
                "rbo_ext": float(ext),
                "overlap": int(overlap),
                "len_a": int(la),
                "len_b": int(lb),
                "max_move": int(max_move),
                "moves": [dict(m) for m in mv],
                "score_a": sa,
                "score_b": sb,
                "difference": (sb - sa) if sa is not None and sb is not None else None,
            }
        )
    if not out:
        raise MetaError(f"neither {baseline!r} nor {run!r} retrieved documents for a judged topic of {qrels!r}")
    return Contrast(qrels, baseline, run, depth, p, stored or metric, out)

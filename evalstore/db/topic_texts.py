"""The query text of each topic, as the command line's outputs show it beside a topic id.

A store may hold topic sets (``evalstore ingest topics``: the ``topics`` view). The per-topic
outputs (``eval --per-topic``, ``export leaderboard --per-topic``, ``compare --per-topic``,
``explain``) show each topic's query: the one of the newest topic set that has the topic (the
explorer's topic page shows every set's). A store without topic sets shows none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def topic_queries(con: Any, qrels_ids: Sequence[int]) -> dict[str, str]:
    """``{topic: query}`` of the topics judged in the qrels sets ``qrels_ids`` that a topic set of
    the store has (the newest set's query when several have the topic)."""
    if not con.execute("SELECT EXISTS (SELECT 1 FROM topic_set_meta)").fetchone()[0]:
        return {}
    rows = con.execute(
        """SELECT d.topic, arg_max(d.query, m.ingested_at) FROM topic_data d JOIN topic_set_meta m USING (topics_id)
           WHERE d.topic IN (SELECT DISTINCT topic FROM qrels_data WHERE qrels_id IN (SELECT unnest(?::INTEGER[])))
           GROUP BY d.topic""",
        [list(qrels_ids)],
    ).fetchall()
    return {str(t): str(q) for t, q in rows}

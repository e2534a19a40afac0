"""The SQL page (the live server only): a read-only query of the store in the sandbox
(:mod:`evalstore.web.sqlpage`: one statement, capped rows, bytes and time), its rows, and the CSV
download of the same query."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from .. import sqlpage
from ..context import Ctx
from ..frame import frame_model


def sql_page(ctx: Ctx, query: str | None = None) -> dict[str, Any]:
    """The page's model; ``status`` 400 when the query failed (its message is on the page)."""
    limits = ctx.sql
    assert limits is not None, "the SQL page runs on the live server"
    query = query or ""
    outcome = limits.run(query)
    model = frame_model(ctx, "sql", "SQL")
    model.update(
        {
            "status": 400 if outcome.error else 200,
            "sql_link": ctx.links.to("sql"),
            "query": query,
            "columns": outcome.columns,
            "rows": outcome.rows,
            "truncated": outcome.truncated,
            "error": outcome.error,
            "elapsed": outcome.elapsed,
            "ran": outcome.ran,
            "row_cap": limits.row_cap,
            "byte_cap_mib": f"{sqlpage.BYTE_CAP / 2**20:g}",
            "time_limit": limits.time_limit,
            "csv": f"/download/sql.csv?{urlencode({'q': query})}" if outcome.ran and outcome.columns else None,
            "examples": [{"query": e, "href": ctx.links.to("sql", e)} for e in sqlpage.EXAMPLES] if not query else [],
        }
    )
    return model

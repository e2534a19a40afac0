"""The ASGI application of ``evalstore serve`` (Starlette): the routes of issue 26 over one store.

Every request opens the store for itself and closes it before answering
(``evalstore.open(path, sandbox=True)``: read-only, no file or network access), so the server
holds no lock between requests: ``evalstore ingest`` and ``eval`` can write to the store while it
runs, and the next page shows what they wrote. A request that meets a writer retries for ``wait``
seconds, then answers 503. The store file is never written.

Routes: ``/`` (leaderboard), ``/runs/{run}``, ``/compare``, ``/topics/{topic}``, ``/meta``,
``/sql``, ``/download/leaderboard.csv``, ``/download/leaderboard.parquet``,
``/download/sql.csv``, ``/static/{name}`` (the two files of :data:`~evalstore.web.render.STATIC`,
looked up by name: no URL reaches the file system). Anything else is a 404 page.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..errors import EvalstoreError, StoreLockedError
from ..facade import Store
from ..facade import open as open_store
from ..report.writers import csv_value
from . import pages, render, sqlpage
from .links import LiveLinks, file_name

log = logging.getLogger("evalstore.web")

#: the headers of every answer: nothing is loaded from another host, nothing runs but our script
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Source:
    """How each request opens the store."""

    location: str
    wait: float = 2.0
    memory_limit: str | None = None
    threads: int | None = None
    row_cap: int = sqlpage.ROW_CAP
    time_limit: float = sqlpage.TIME_LIMIT

    def open(self) -> Store:
        return open_store(
            self.location, sandbox=True, wait=self.wait, memory_limit=self.memory_limit, threads=self.threads
        )


def create_app(source: Source) -> Starlette:
    """The application serving the store of ``source``."""
    render.require_jinja()
    links = LiveLinks()
    title = pages.site_title(source.location)

    def html(template: str, model: dict[str, Any], status: int = 200) -> HTMLResponse:
        return HTMLResponse(render.render(template, model), status_code=status, headers=SECURITY_HEADERS)

    def error(status: int, message: str) -> HTMLResponse:
        resp = html("error.html", pages.error_page(links, status, message, title), status)
        if status == 503:
            resp.headers["Retry-After"] = "2"
        return resp

    def with_store(build: Callable[[pages.Ctx, Request], Response]) -> Callable[[Request], Response]:
        """A sync endpoint (Starlette runs it in a worker thread) around one short-lived connection."""

        def endpoint(request: Request) -> Response:
            try:
                store = source.open()
            except StoreLockedError as e:
                return error(503, str(e))
            try:
                return build(pages.Ctx(store, links, title), request)
            except pages.PageError as e:
                return error(e.status, str(e))
            except StoreLockedError as e:
                return error(503, str(e))
            finally:
                store.close()

        return endpoint

    def p(request: Request, name: str) -> str | None:
        return request.query_params.get(name)

    def leaderboard(ctx: pages.Ctx, request: Request) -> Response:
        return html("leaderboard.html", pages.leaderboard_page(ctx, p(request, "qrels"), p(request, "metric")))

    def run(ctx: pages.Ctx, request: Request) -> Response:
        model = pages.run_page(ctx, request.path_params["run"], p(request, "qrels"), p(request, "metric"))
        return html("run.html", model)

    def compare(ctx: pages.Ctx, request: Request) -> Response:
        model = pages.compare_page(
            ctx, p(request, "baseline"), p(request, "run"), p(request, "qrels"), p(request, "metric")
        )
        return html("compare.html", model)

    def topic(ctx: pages.Ctx, request: Request) -> Response:
        model = pages.topic_page(
            ctx,
            request.path_params["topic"],
            p(request, "runs"),
            p(request, "qrels"),
            p(request, "metric"),
            p(request, "depth"),
        )
        return html("topic.html", model)

    def meta(ctx: pages.Ctx, request: Request) -> Response:
        return html("meta.html", pages.meta_page(ctx))

    def leaderboard_download(ctx: pages.Ctx, request: Request) -> Response:
        fmt = request.path_params["fmt"]
        cols, rows, qrels, metric = pages.leaderboard_table(ctx, p(request, "qrels"), p(request, "metric"))
        name = f"leaderboard-{file_name(qrels)}-{file_name(metric)}.{fmt}"
        if fmt == "csv":
            body, media = _csv(cols, rows), "text/csv; charset=utf-8"
        else:
            body, media = _parquet(cols, rows), "application/vnd.apache.parquet"
        return Response(body, media_type=media, headers={**SECURITY_HEADERS, **_attachment(name)})

    def sql(request: Request) -> Response:
        query = p(request, "q") or ""
        try:
            outcome = sqlpage.run(
                source.location,
                query,
                row_cap=source.row_cap,
                time_limit=source.time_limit,
                wait=source.wait,
                memory_limit=source.memory_limit,
                threads=source.threads,
            )
        except StoreLockedError as e:
            return error(503, str(e))
        model = pages.error_page(links, 200, "", title)  # the frame every page shares
        model.update(
            {
                "page": "sql",
                "heading": "SQL",
                "query": query,
                "columns": outcome.columns,
                "rows": outcome.rows,
                "truncated": outcome.truncated,
                "error": outcome.error,
                "elapsed": outcome.elapsed,
                "ran": outcome.ran,
                "row_cap": source.row_cap,
                "time_limit": source.time_limit,
                "csv": f"/download/sql.csv?{_qs(query)}" if outcome.ran and outcome.columns else None,
                "examples": [{"query": e, "href": links.sql(e)} for e in sqlpage.EXAMPLES] if not query else [],
            }
        )
        return html("sql.html", model, 400 if outcome.error else 200)

    def sql_download(request: Request) -> Response:
        query = p(request, "q") or ""
        try:
            outcome = sqlpage.run(
                source.location, query, row_cap=source.row_cap, time_limit=source.time_limit, wait=source.wait,
                memory_limit=source.memory_limit, threads=source.threads,
            )  # fmt: skip
        except StoreLockedError as e:
            return error(503, str(e))
        if outcome.error or not outcome.ran:
            return error(400, outcome.error or "give a query: /download/sql.csv?q=SELECT ...")
        body = _csv(outcome.columns, [list(r) for r in outcome.rows])
        return Response(
            body, media_type="text/csv; charset=utf-8", headers={**SECURITY_HEADERS, **_attachment("query.csv")}
        )

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in render.STATIC:
            return error(404, "no such file")
        return Response(
            render.static_bytes(name),
            media_type=render.STATIC[name],
            headers={**SECURITY_HEADERS, "Cache-Control": "max-age=300"},
        )

    def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        if status == 405:
            return error(405, "the pages are read-only: only GET (and HEAD) requests are answered")
        return error(404, f"no page at {request.url.path}")

    def failure(request: Request, exc: Exception) -> Response:
        if isinstance(exc, EvalstoreError):
            return error(400, str(exc))
        log.exception("evalstore serve: internal error on %s", request.url.path)
        return error(500, "internal error of evalstore (the server's log has the details); please report it")

    routes = [
        Route("/", with_store(leaderboard)),
        Route("/runs/{run:path}", with_store(run)),
        Route("/compare", with_store(compare)),
        Route("/topics/{topic:path}", with_store(topic)),
        Route("/meta", with_store(meta)),
        Route("/sql", sql),
        Route("/download/leaderboard.{fmt:str}", _only_formats(with_store(leaderboard_download), error)),
        Route("/download/sql.csv", sql_download),
        Route("/static/{name:path}", static),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found, 404: not_found, 405: not_found, Exception: failure},
    )


def _only_formats(endpoint: Callable[[Request], Response], error) -> Callable[[Request], Response]:
    def guarded(request: Request) -> Response:
        if request.path_params.get("fmt") not in ("csv", "parquet"):
            return error(404, "downloads: leaderboard.csv or leaderboard.parquet")
        return endpoint(request)

    return guarded


def _qs(query: str) -> str:
    from urllib.parse import urlencode

    return urlencode({"q": query})


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


def _csv(columns: list[str], rows: list[list[Any]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_value(v) for v in r])
    return buf.getvalue().encode("utf-8")


def _parquet(columns: list[str], rows: list[list[Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()

"""The ASGI application of ``evalstore serve`` (Starlette): the routes of issue 26 over one store.

Every request opens the store for itself and closes it before answering
(``evalstore.open(path, sandbox=True)``: read-only, no file or network access), so the server
holds no lock between requests: ``evalstore ingest`` and ``eval`` can write to the store while it
runs, and the next page shows what they wrote. Parallel requests share one DuckDB instance (and
its memory limit); a failed open leaves no connection behind. A writer waiting for the store
(``--wait``) goes first (:mod:`evalstore.db.waiting`): requests that meet it, or a writer
holding the store, retry for ``wait`` seconds, then answer 503 with ``Retry-After``. The store
file is never written. Only requests for the host names the server was started for are answered
(:mod:`.hosts`, against DNS rebinding).

Routes: the pages of the route table (:data:`~.routes.ROUTES`: ``/`` the leaderboard; ``metric=``
repeated: side by side; ``?rank_ci=bootstrap|t``: rank intervals; ``/runs/{run}``, ``/compare``,
``/contrast``, ``/topics/{topic}``, ``/meta``, ``/agree`` a judge comparison, ``/sql``), and the
files ``/download/leaderboard.csv``, ``/download/leaderboard.parquet``,
``/download/sql.csv``, ``/static/{name}`` (the two files of :data:`~evalstore.web.render.STATIC`,
looked up by name: no URL reaches the file system). Anything else is a 404 page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..errors import EvalstoreError, StoreLockedError
from ..output.formats import to_bytes
from ..output.table import Table
from ..store import Store
from ..store import open as open_store
from . import hosts, render, routes, sqlpage
from .context import Ctx, PageError, site_title
from .frame import error_model
from .links import LiveLinks, file_name
from .pages import leaderboard

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
    metric: str | None = None  # serve --metric: the default metric of the pages

    def sql_limits(self) -> sqlpage.SqlLimits:
        """The SQL page's runner under this source's limits."""
        return sqlpage.SqlLimits(
            self.location, self.row_cap, self.time_limit, self.wait, self.memory_limit, self.threads
        )

    def open(self) -> Store:
        return open_store(
            self.location,
            sandbox=True,
            wait=self.wait,
            memory_limit=self.memory_limit,
            threads=self.threads,
            yield_to_writers=True,
        )


class Site:
    """The endpoints over one store: each page of the route table (:data:`~.routes.ROUTES`) opens
    the store for itself (:meth:`endpoint`)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.links = LiveLinks(routes.BY_NAME)
        self.title = site_title(source.location)
        self.nav = routes.NAV

    # ------------------------------------------------------------------ answers
    def html(self, template: str, model: dict[str, Any], status: int = 200) -> HTMLResponse:
        return HTMLResponse(render.render(template, model), status_code=status, headers=SECURITY_HEADERS)

    def error(self, status: int, message: str) -> HTMLResponse:
        resp = self.html("error.html", error_model(self, status, message), status)
        if status == 503:
            resp.headers["Retry-After"] = "2"
        return resp

    def context(self, store: Store) -> Ctx:
        return Ctx(
            store, self.links, self.title, default_metric=self.source.metric, nav=self.nav, sql=self.source.sql_limits()
        )

    def with_store(self, build: Callable[[Ctx, Request], Response]) -> Callable[[Request], Response]:
        """A sync endpoint (Starlette runs it in a worker thread) around one short-lived connection."""

        def endpoint(request: Request) -> Response:
            try:
                store = self.source.open()
            except StoreLockedError as e:
                return self.error(503, str(e))
            try:
                return build(self.context(store), request)
            except PageError as e:
                return self.error(e.status, str(e))
            except StoreLockedError as e:
                return self.error(503, str(e))
            finally:
                store.close()

        return endpoint

    # ------------------------------------------------------------------ pages
    def endpoint(self, route: routes.Route) -> Callable[[Request], Response]:
        """The endpoint of a page: the view's arguments from the request, its model in its template."""

        def build(ctx: Ctx, request: Request) -> Response:
            model = route.view(ctx, *_arguments(route, request))
            return self.html(route.template, model, model.get("status", 200))

        if route.store:
            return self.with_store(build)

        def without_store(request: Request) -> Response:
            # the SQL page opens its own sandboxed connection per query (sqlpage.run)
            try:
                return build(self.context(cast("Store", None)), request)
            except StoreLockedError as e:
                return self.error(503, str(e))

        return without_store

    # ------------------------------------------------------------------ files
    def leaderboard_download(self, ctx: Ctx, request: Request) -> Response:
        fmt = request.path_params["fmt"]
        if fmt not in ("csv", "parquet"):
            return self.error(404, "downloads: leaderboard.csv or leaderboard.parquet")
        cols, rows, qrels, metric = leaderboard.leaderboard_table(ctx, _q(request, "qrels"), _q(request, "metric"))
        name = f"leaderboard-{file_name(qrels)}-{file_name(metric)}.{fmt}"
        return _download(Table(cols, rows), fmt, name)

    def sql_download(self, request: Request) -> Response:
        try:
            outcome = self.source.sql_limits().run(_q(request, "q") or "")
        except StoreLockedError as e:
            return self.error(503, str(e))
        if outcome.error or not outcome.ran:
            return self.error(400, outcome.error or "give a query: /download/sql.csv?q=SELECT ...")
        return _download(Table(outcome.columns, [list(r) for r in outcome.rows]), "csv", "query.csv")

    def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in render.STATIC:
            return self.error(404, "no such file")
        return Response(
            render.static_bytes(name),
            media_type=render.STATIC[name],
            headers={**SECURITY_HEADERS, "Cache-Control": "max-age=300"},
        )

    # ------------------------------------------------------------------ failures
    def not_found(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        if status == 405:
            return self.error(405, "the pages are read-only: only GET (and HEAD) requests are answered")
        return self.error(404, f"no page at {request.url.path}")

    def failure(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, EvalstoreError):
            return self.error(400, str(exc))
        log.exception("evalstore serve: internal error on %s", request.url.path)
        return self.error(500, "internal error of evalstore (the server's log has the details); please report it")


def create_app(source: Source, host: str = "127.0.0.1", allowed: Sequence[str] = ()) -> Starlette:
    """The application serving the store of ``source`` to requests for ``host`` (the address it
    listens on), the loopback names and the names of ``allowed`` (:mod:`.hosts`)."""
    render.require_jinja()
    site = Site(source)
    pages = [Route(r.path, site.endpoint(r)) for r in routes.ROUTES]
    files = [
        Route("/download/leaderboard.{fmt:str}", site.with_store(site.leaderboard_download)),
        Route("/download/sql.csv", site.sql_download),
        Route("/static/{name:path}", site.static),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Response]] = {
        HTTPException: site.not_found,
        404: site.not_found,
        405: site.not_found,
        Exception: site.failure,
    }
    names, any_ip = hosts.allowed_hosts(host, allowed)
    middleware = [Middleware(hosts.HostCheck, names=names, any_ip=any_ip)]
    return Starlette(routes=pages + files, exception_handlers=handlers, middleware=middleware)


def _q(request: Request, name: str) -> str | None:
    return request.query_params.get(name)


def _arguments(route: routes.Route, request: Request) -> list[Any]:
    """The view's arguments after the context, as the route names them: from the path, else the
    query (``name*``: every value of a repeated parameter)."""
    out: list[Any] = []
    for name in route.params:
        if name in route.path_params:
            out.append(request.path_params[name])
        elif name.endswith("*"):
            out.append(request.query_params.getlist(name[:-1]))
        else:
            out.append(request.query_params.get(name))
    return out


_MEDIA = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def _download(table: Table, fmt: str, name: str) -> Response:
    """A table as a file to download, written by the report writers (one CSV and Parquet rule)."""
    body = to_bytes(table, fmt)
    headers = {**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'}
    return Response(body, media_type=_MEDIA[fmt], headers=headers)

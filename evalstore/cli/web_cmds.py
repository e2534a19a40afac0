"""`evalstore serve` and `evalstore report`: the store's results as web pages (the web extra).

Both check every option before any work and make one library call (:mod:`evalstore.web`); the web
libraries (starlette, uvicorn, jinja2) are imported only when a command runs, and a missing one is
a one-line message naming ``pip install "evalstore[web]"``.
"""

from __future__ import annotations

import typer

from . import options as opt
from . import ranges
from .app import app, open_for_reading
from .output import say
from .ranges import number


@app.command(
    "serve",
    help=(
        "Browse the store's results in a web browser: leaderboard with 95% intervals, per-topic pages of runs "
        "against the median and best, comparisons, ranked lists side by side, stored analyses and a sandboxed "
        "SQL page. Read-only; the store stays open to writers (ingest, eval) while it runs. Needs the web "
        'extra: pip install "evalstore\\[web]".'
    ),
)
@opt.shared(store=opt.STORE)
def serve_cmd(
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on (default: this machine only; 0.0.0.0: the whole network; [::1]: IPv6 loopback).",
    ),
    port: int = number(8000, "--port", range=ranges.PORT, help="Port to listen on (0: any free port)."),
    sql_time_limit: float = number(
        5.0, "--sql-time-limit", range=ranges.SQL_SECONDS, help="Seconds a query of the SQL page may run."
    ),
    allow_host: list[str] | None = typer.Option(
        None,
        "--allow-host",
        help="Another host name the pages are served under (a DNS alias, a proxy's name); repeat. Requests for "
        "other names than these, the loopback names and --host are refused (DNS rebinding).",
    ),
    metric: str | None = typer.Option(
        None, "--metric", "-m", help="Metric the pages show by default (default: the first one evaluated)."
    ),
    *,
    store: opt.StoreOptions,
) -> None:
    from ..web import deps, server  # the web extra (starlette, uvicorn): loaded by `serve` only

    if not host.strip():
        raise typer.BadParameter("give an address, e.g. 127.0.0.1", param_hint="--host")
    deps.require(*deps.SERVER)
    warning = server.exposure_warning(host, port)
    if warning:
        say(warning)

    def ready(url: str) -> None:
        typer.echo(f"evalstore serve: {url}  (read-only view of the store; Ctrl-C to stop)")

    server.serve(
        store.db,
        host=host,
        port=port,
        wait=store.wait or 0.0,
        memory_limit=store.memory_limit,
        threads=store.threads,
        allowed=allow_host or (),
        sql_time_limit=sql_time_limit,
        on_ready=ready,
        metric=metric,
    )


@app.command(
    "report",
    help=(
        "Write the pages of `evalstore serve` as a static HTML report into FOLDER: index.html (leaderboard), a "
        "page per run, per comparison with the best run and per topic, the stored analyses; relative links, "
        "opens from disk or any web server. Reads stored scores (run `evalstore eval` first). Needs the web "
        'extra: pip install "evalstore\\[web]".'
    ),
)
@opt.shared(store=opt.STORE)
def report_cmd(
    folder: str = typer.Argument(..., help="Folder to write (new, empty, or an earlier report's)."),
    qrels: str | None = typer.Option(
        None, "--qrels", "-q", help="Qrels set (default: the only one with scores, subsamples aside)."
    ),
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        "-m",
        help="Metric with stored scores; repeat: the leaderboard shows them side by side, each with its own pages "
        "(default: the first one evaluated).",
    ),
    *,
    store: opt.StoreOptions,
) -> None:
    from ..web import deps, static_site  # the web extra (jinja2): loaded by `report` only

    deps.require("jinja2")
    static_site.check_folder(folder)
    with open_for_reading(store) as s:
        result = static_site.write_report(s, folder, qrels, metric or None)
    say([result.summary(), *(f"  {n}" for n in result.notes())])

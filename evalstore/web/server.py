"""``evalstore serve``: check the store, bind the address, run the application with uvicorn."""

from __future__ import annotations

import contextlib
import ipaddress
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence

from ..db import resolve_location, waiting
from ..errors import StoreError
from ..store import open as open_store
from .deps import SERVER, require
from .hosts import bare_host


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address (only this machine reaches it)."""
    host = bare_host(host)
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    addrs = {str(info[4][0]) for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs)


def exposure_warning(host: str, port: int) -> str | None:
    """The warning for an address other machines can reach, else None."""
    if is_loopback(host):
        return None
    return (
        f"warning: --host {host} serves the store to the network: anyone who can reach this machine on port "
        f"{port} can read every run, qrels set, score and analysis in it (the pages are read-only, without a login)"
    )


def check_store(location: str | None, wait: float = 0.0) -> str:
    """The store's location, after checking that it exists and can be read as it is (a store that
    needs an upgrade is refused: the server never writes)."""
    loc = resolve_location(location)
    if loc == ":memory:":
        raise StoreError("evalstore serve needs a store file (an in-memory store is empty)")
    open_store(loc, sandbox=True, wait=wait).close()
    return loc


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free port. An IPv6 address may be given
    in brackets, as in a URL (``[::1]``)."""
    host = bare_host(host)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise StoreError(f"cannot serve on {host!r}: {e.strerror or e}") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        hint = " (another program uses it: choose another with --port)" if e.errno in (98, 48, 10048) else ""
        raise StoreError(f"cannot listen on {host}:{port}: {e.strerror or e}{hint}") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM ends the process as an exit (``finally`` blocks run: the server's marker is removed)
    rather than at once: uvicorn handles SIGTERM itself while it serves, then restores this handler
    and raises the signal again."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def exit_(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, exit_)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def serve(
    location: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    wait: float = 2.0,
    memory_limit: str | None = None,
    threads: int | None = None,
    allowed: Sequence[str] = (),
    sql_time_limit: float = 5.0,
    on_ready: Callable[[str], None] = print,
    metric: str | None = None,
) -> None:
    """Serve the store at ``location`` read-only on ``host:port`` until interrupted, to requests
    for ``host``, the loopback names and the names of ``allowed`` (:mod:`.hosts`); ``on_ready``
    receives the URL once the address is bound; ``sql_time_limit``: seconds a query of the SQL
    page may run; ``metric``: the metric pages show when none is asked for (else the first one
    evaluated)."""
    require(*SERVER)
    import uvicorn

    from .app import Source, create_app  # starlette: the app is built once the extra is checked

    loc = check_store(location, wait)
    source = Source(
        loc, wait=max(wait, 2.0), memory_limit=memory_limit, threads=threads, time_limit=sql_time_limit, metric=metric
    )
    app = create_app(source, host=host, allowed=allowed)
    sock = bind(host, port)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    server = uvicorn.Server(config)
    on_ready(url_of(sock))
    try:
        with waiting.serving(loc), _terminate_as_exit():  # writers that find the store held here wait for it
            server.run(sockets=[sock])
    finally:
        sock.close()

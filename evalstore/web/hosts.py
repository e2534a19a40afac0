"""Which ``Host`` headers ``evalstore serve`` answers: a guard against DNS rebinding.

A web page the user visits can make its own domain name resolve to 127.0.0.1 and then read the
pages (and ``/download/sql.csv``) of a server on this machine; the browser sends that domain as
the ``Host`` header. So the server answers only requests whose Host is one of the names it was
started for: the loopback names (``localhost``, ``127.0.0.1``, ``::1``), the ``--host`` given,
and, when ``--host`` is a wildcard (``0.0.0.0``, ``::``: every interface), this machine's names
and any IP address literal (a rebinding attack needs a domain name). Any other Host gets 400.

:class:`HostCheck` is a plain ASGI middleware (no web library needed to import it).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

LOOPBACK = frozenset({"localhost", "localhost.localdomain", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def bare_host(host: str) -> str:
    """``host`` without brackets of an IPv6 literal (``[::1]`` -> ``::1``), lower case."""
    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    return h.rstrip(".")


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> tuple[frozenset[str], bool]:
    """The Host names answered by a server started with ``--host host``, and whether any IP
    literal is answered too (a wildcard host)."""
    names = set(LOOPBACK) | {bare_host(host)} | {bare_host(h) for h in extra}
    wildcard = bare_host(host) in WILDCARDS
    if wildcard:
        for name in (socket.gethostname(), socket.getfqdn()):
            if name:
                names.add(bare_host(name))
    return frozenset(names - {""}), wildcard


def host_of(header: str) -> str | None:
    """The host part of a Host header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), or None
    when it is malformed."""
    h = header.strip()
    if h.startswith("["):
        end = h.find("]")
        if end < 0:
            return None
        rest = h[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return bare_host(h[: end + 1])
    name, sep, port = h.rpartition(":")
    if not sep:
        name = h
    elif not port.isdigit():
        return None
    if not name or ":" in name:
        return None
    return bare_host(name)


def is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """ASGI middleware: HTTP requests whose Host is not allowed get a plain 400."""

    def __init__(self, app: Any, names: frozenset[str], any_ip: bool = False) -> None:
        self.app, self.names, self.any_ip = app, names, any_ip

    def allows(self, header: str | None) -> bool:
        if header is None:
            return False
        host = host_of(header)
        return host is not None and (host in self.names or (self.any_ip and is_ip(host)))

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]], send: Any) -> None:
        if scope.get("type") == "http":
            headers = dict(scope.get("headers") or [])
            raw = headers.get(b"host")
            if not self.allows(raw.decode("latin-1") if raw is not None else None):
                body = (
                    b"400 Bad Request: this evalstore server does not answer for that host name "
                    b"(start it with --host NAME to serve under another name)\n"
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

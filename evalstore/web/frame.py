"""The frame every page shares (``templates/base.html``): the site's title, the version, the style
sheet and script, the navigation (generated from the route table: :data:`evalstore.web.routes.NAV`),
and the qrels set and metric the page shows. The error page is the same frame with a message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..version import __version__

if TYPE_CHECKING:
    from .links import Links, NavItem

#: the heading of an error page by its status
ERROR_HEADINGS = {404: "Not found", 400: "Bad request", 503: "The store is busy"}


class Framed(Protocol):
    """What the frame reads: a view's context, or the server answering without a store."""

    @property
    def links(self) -> Links: ...
    @property
    def title(self) -> str: ...
    @property
    def nav(self) -> Sequence[NavItem]: ...


def frame_model(
    ctx: Framed, page: str, heading: str, qrels: str | None = None, metric: str | None = None
) -> dict[str, Any]:
    """The model of the frame; a view adds its own keys to it."""
    links = ctx.links
    nav = []
    for item in ctx.nav:
        href = links.nav(item)
        if href:
            nav.append({"label": item.label, "href": href, "current": item.page == page})
    return {
        "page": page,
        "heading": heading,
        "site": ctx.title,
        "live": links.live,
        "version": __version__,
        "css": links.static("evalstore.css"),
        "js": links.static("sort.js"),
        "home": links.home(),
        "nav": nav,
        "qrels": qrels,
        "metric": metric,
    }


def error_model(ctx: Framed, status: int, message: str) -> dict[str, Any]:
    """The error page: the frame, its status and the message."""
    model = frame_model(ctx, "error", ERROR_HEADINGS.get(status, "Error"))
    model.update({"status": status, "message": message})
    return model

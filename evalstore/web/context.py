"""What every view gets: the request context (:class:`Ctx`: the open store, the links, the site's
title, the navigation, a cache for the static site), the errors a view raises (:class:`NotFound`:
the page answers 404, :class:`BadRequest`: 400), and :class:`ReportPlan`, what the static site has
decided to write (each route's ``report`` turns it into that page's files)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import EvalstoreError

if TYPE_CHECKING:
    from ..store import Store
    from .links import Links, NavItem, ReportLinks
    from .sqlpage import SqlLimits

#: topics a run page lists at once (a store of more topics gets pages: ?page=2, ...), and the
#: comparison page at most (the largest wins and losses)
PAGE_TOPICS = 1000


class PageError(EvalstoreError):
    status = 400


class NotFound(PageError):
    """A run, topic, qrels set or metric the store does not hold."""

    status = 404


class BadRequest(PageError):
    status = 400


@dataclass
class Ctx:
    """What every view needs: the open store, the links, and (for the static site, which builds
    many pages from one store) a cache of what several pages read."""

    store: Store
    links: Links
    title: str = ""
    cache: dict[Any, Any] | None = None
    notes: list[str] = field(default_factory=list)
    default_metric: str | None = None  # serve --metric: the metric a page shows when none is asked for
    nav: Sequence[NavItem] = ()
    sql: SqlLimits | None = None  # the SQL page's runner and limits (the live server only)

    def cached(self, key: Any, make):
        if self.cache is None:
            return make()
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


@dataclass
class ReportPlan:
    """What the static site writes pages of: its qrels set and metrics (the first orders the
    runs), the runs shown per metric, the best run per metric (what comparisons compare with), the
    topics with a page, the pair of runs a topic page shows, the stored judge comparisons."""

    links: ReportLinks
    qrels: str
    metrics: list[str]
    shown: dict[str, list[str]]
    best: dict[str, str]
    topics: list[str]
    pair: list[str]
    judged: list[int]


#: a file of the static site: (its path, the view's arguments after the context)
ReportFile = tuple[str, tuple[Any, ...]]


def site_title(location: str) -> str:
    return os.path.basename(location) or location

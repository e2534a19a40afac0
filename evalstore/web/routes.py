"""The route table: every page of ``evalstore serve`` and ``evalstore report``, once.

A :class:`Route` names its view (a function of :mod:`evalstore.web.pages` that returns the
template's model), its template, its address on the live server and where the view's arguments come
from (the path, else the query; ``name*``: a parameter that repeats), the static site's files of the
page (``report``: from the :class:`~evalstore.web.context.ReportPlan`; None: live only) and its
entry in the navigation of every page. The server (:mod:`.app`) and the static site
(:mod:`.static_site`) are both driven by :data:`ROUTES`; the navigation is :data:`NAV`.

Adding a page: a view module in ``pages/`` (the view; ``report_files`` and ``report_path`` if the
static site has the page), a template in ``templates/``, a :class:`Route` here (with ``nav`` it is
in the navigation of every page). Other pages link to it with its view's arguments:
``links.to(name, ...)`` (:class:`~evalstore.web.links.Links`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .context import ReportFile, ReportPlan
from .links import NavItem
from .pages import agree, compare, contrast, leaderboard, meta, run, sql, topic


@dataclass(frozen=True)
class Route:
    name: str
    path: str  # Starlette's path syntax: {run:path}
    view: Callable[..., dict[str, Any]]
    template: str
    params: tuple[str, ...] = ()  # the view's arguments after the context: path or query names; "name*" repeats
    report: Callable[[ReportPlan], list[ReportFile]] | None = None
    report_path: Callable[..., str | None] | None = None  # the page's file for the view's arguments (None: not there)
    nav: str | None = None  # the label of the page in the navigation
    nav_file: str | None = None  # the file the navigation opens in the static site (None: live only)
    store: bool = True  # the view reads the store (opened for the request); False: the SQL page's own sandbox

    @property
    def path_params(self) -> set[str]:
        return set(re.findall(r"{(\w+)", self.path))


ROUTES: tuple[Route, ...] = (
    Route(
        "leaderboard",
        "/",
        leaderboard.leaderboard_page,
        "leaderboard.html",
        params=("qrels", "metric*", "rank_ci", "trials", "seed"),
        report=leaderboard.report_files,
        report_path=leaderboard.report_path,
        nav="Leaderboard",
        nav_file="index.html",
    ),
    Route(
        "run",
        "/runs/{run:path}",
        run.run_page,
        "run.html",
        params=("run", "qrels", "metric", "page"),
        report=run.report_files,
        report_path=run.report_path,
    ),
    Route(
        "compare",
        "/compare",
        compare.compare_page,
        "compare.html",
        params=("baseline", "run", "qrels", "metric", "missing"),
        report=compare.report_files,
        report_path=compare.report_path,
    ),
    Route(
        "contrast",
        "/contrast",
        contrast.contrast_page,
        "contrast.html",
        params=("baseline", "run", "qrels", "metric"),
        report=contrast.report_files,
        report_path=contrast.report_path,
    ),
    Route(
        "topic",
        "/topics/{topic:path}",
        topic.topic_page,
        "topic.html",
        params=("topic", "runs", "qrels", "metric", "depth"),
        report=topic.report_files,
        report_path=topic.report_path,
    ),
    Route(
        "meta",
        "/meta",
        meta.meta_page,
        "meta.html",
        report=meta.report_files,
        report_path=meta.report_path,
        nav="Analyses",
        nav_file="meta.html",
    ),
    Route(
        "agree",
        "/agree",
        agree.agree_page,
        "agree.html",
        params=("id",),
        report=agree.report_files,
        report_path=agree.report_path,
    ),
    Route("sql", "/sql", sql.sql_page, "sql.html", params=("q",), nav="SQL", store=False),
)

#: the route table by name (what :class:`~evalstore.web.links.Links` finds a page's address in)
BY_NAME: dict[str, Route] = {r.name: r for r in ROUTES}

#: the navigation of every page, in the order of the table
NAV: tuple[NavItem, ...] = tuple(NavItem(r.nav, r.name, r.path, r.nav_file) for r in ROUTES if r.nav)

"""``evalstore report DIR``: the pages of ``evalstore serve`` written as static HTML files.

The same route table (:data:`.routes.ROUTES`: each page's view, template and the files it has in
the report), views (:mod:`.pages`) and templates render every page; :class:`~.links.ReportLinks`
makes the links relative, so the folder opens from disk (``file://``) or from any web server.
Layout of the folder:

=====================================  ==========================================================
``index.html``                         the leaderboard: the report's metrics side by side (or its
                                       one metric)
``leaderboard-<metric>.html``          the leaderboard of each metric alone (with several)
``leaderboard-<metric>.csv/.parquet``  each leaderboard as data
``runs/<metric>/<run>.html``           each run's per-topic page, for each metric
``compare/<metric>/<run>.html``        each run against the best run of that metric
``contrast/<metric>/<run>.html``       where each run and the best run (first metric) differ
``topics/<topic>.html``                each topic: the best run beside the second best (by the
                                       first metric), their ranked lists and every run's scores
``meta.html``                          the stored analyses
``agree-<id>.html``                    each stored comparison of judges (``evalstore agree``)
``static/``                            the style sheet and the table-sorting script
``evalstore-report.json``              what was written (a later report into the same folder
                                       replaces exactly these files)
=====================================  ==========================================================

Names are kept readable (``runs/nDCG@10/dl19-bm25.html``); a name that is not a safe file name
gets a short hash (:func:`~.links.file_names`).

The store is only read. The report needs the scores to be stored (``evalstore eval`` first).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..output.formats import to_bytes
from ..output.table import Table
from ..version import __version__
from . import context, render, routes
from . import queries as q
from .choices import choose
from .context import Ctx, NotFound, ReportPlan, site_title
from .links import ReportLinks
from .pages import agree, leaderboard
from .report_folder import MANIFEST, ReportError, ReportFolder, check_target

__all__ = ["MANIFEST", "ReportError", "ReportResult", "check_folder", "write_report"]

if TYPE_CHECKING:
    from ..store import Store

#: the most run pages (and comparison pages) per metric, and topic pages, a report writes; the
#: others are left out with a note on every page and in the summary (``evalstore serve`` shows all)
MAX_RUN_PAGES = 1000
MAX_TOPIC_PAGES = 1000


@dataclass
class ReportResult:
    folder: str
    qrels: str
    metrics: list[str]
    runs: int
    topics: int
    files: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    @property
    def index(self) -> str:
        return os.path.join(self.folder, "index.html")

    def summary(self) -> str:
        return (
            f"wrote {len(self.files)} files to {self.folder}: the leaderboard{'s' if len(self.metrics) > 1 else ''} of "
            f"{', '.join(self.metrics)} on {self.qrels}, {self.runs} run pages per metric, {self.topics} topic pages "
            f"and the analyses; open {self.index}"
        )

    def notes(self) -> list[str]:
        """What the report left out, a line each."""
        return [f"note: left out {what}" for what in self.left_out]


def check_folder(folder: str | os.PathLike) -> Path:
    """The report's folder: new, empty, or holding an earlier report (its manifest, nothing else);
    never a symbolic link (:func:`.report_folder.check_target`)."""
    return check_target(folder)


def _only_qrels(cat: q.Catalogue) -> str:
    """The one qrels set with scores (subsamples aside), or the error that asks for --qrels."""
    choices = cat.judged_sets
    if len(choices) > 1:
        n_subsamples = len(cat.subsamples & set(cat.qrels))
        aside = f"; and on {n_subsamples} subsample(s) of them" if n_subsamples else ""
        raise ReportError(
            f"the store has scores on {len(choices)} qrels sets ({', '.join(choices[:10])}"
            f"{', ...' if len(choices) > 10 else ''}{aside}); choose one with --qrels"
        )
    return choices[0]


def _stored_metrics(probe: Ctx, qrels: str, metrics: Sequence[str] | None) -> list[str]:
    """The stored names of ``metrics`` (default: the metric evaluated for the most runs), each once."""
    names: list[str] = []
    for m in metrics or [None]:  # type: ignore[list-item]
        try:
            _, stored, _ = choose(probe, qrels, m)
        except NotFound as e:
            raise ReportError(str(e)) from None
        if stored not in names:
            names.append(stored)
    return names


def write_report(
    store: Store,
    folder: str | os.PathLike,
    qrels: str | None = None,
    metrics: Sequence[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ReportResult:
    """Write the static report of ``qrels`` (default: the store's only qrels set with scores, its
    subsamples aside) and
    ``metrics`` (default: the metric evaluated for the most runs) into ``folder``."""
    render.require_jinja()
    out = check_folder(folder)
    cat = q.catalogue(store)
    if not cat.metrics:
        raise ReportError("the store holds no scores; evaluate first (evalstore eval --qrels Q -m AP -m nDCG@10)")
    if qrels is None:
        qrels = _only_qrels(cat)
    probe = Ctx(store, ReportLinks(routes.BY_NAME, qrels, ["-"], {}, set()), cache={})
    names = _stored_metrics(probe, qrels, metrics)
    boards = {m: q.leaderboard(store, qrels, m) for m in names}
    best = {m: b[0].run for m, b in boards.items() if b}
    all_topics = q.topics_with_scores(store, qrels, names[0])
    topics = all_topics[:MAX_TOPIC_PAGES]
    shown = {m: [r.run for r in b[:MAX_RUN_PAGES]] for m, b in boards.items()}
    left_out = _left_out(boards, shown, all_topics, topics)
    note = "; ".join(f"left out {w}" for w in left_out) or None
    judged = [a["id"] for a in agree.agreements(store)]
    runs = list(dict.fromkeys(r for m in names for r in shown.get(m, [])))
    links = ReportLinks(routes.BY_NAME, qrels, names, best, set(topics), runs=runs, agreements=judged)
    ctx = Ctx(store, links, site_title(store.location), cache=dict(probe.cache or {}), nav=routes.NAV)
    pair = [r.run for r in boards[names[0]][:2]]
    jobs = _jobs(ReportPlan(links, qrels, names, shown, best, topics, pair, judged))
    written: list[str] = []
    total = len(jobs) + 2 * len(names) + len(render.STATIC)
    with ReportFolder(out) as dest:
        for i, (rel, route, args) in enumerate(jobs, start=1):
            model = route.view(_at(ctx, rel), *args)
            model["report_note"] = note
            dest.write(rel, render.render(route.template, model).encode("utf-8"))
            written.append(rel)
            if progress:
                progress(i, total)
        for m in names:
            cols, rows, _, _ = leaderboard.leaderboard_table(_at(ctx, "index.html"), qrels, m)
            for fmt in ("csv", "parquet"):  # the same data files as the server's downloads
                rel = links.download_path("leaderboard", fmt, m)
                dest.write(rel, to_bytes(Table(cols, rows), fmt))
                written.append(rel)
        for name in render.STATIC:
            rel = f"static/{name}"
            dest.write(rel, render.static_bytes(name))
            written.append(rel)
        manifest = {"evalstore": __version__, "qrels": qrels, "metrics": names, "files": written, "left_out": left_out}
        dest.write(MANIFEST, (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
        dest.commit()
    n_runs = len(shown[names[0]]) if names[0] in shown else 0
    return ReportResult(str(out), qrels, names, n_runs, len(topics), written + [MANIFEST], left_out)


#: a page of the report: (file, its route, the view's arguments after the context)
Job = tuple[str, routes.Route, tuple[Any, ...]]


def _jobs(plan: ReportPlan) -> list[Job]:
    """Every page of the report, route by route (:data:`.routes.ROUTES`, each route's
    ``report_files``): the leaderboards, the pages of the runs shown, their comparisons with the
    best run (and, for the first metric, where they differ), the topics, the analyses, the judge
    comparisons."""
    return [(rel, route, args) for route in routes.ROUTES if route.report for rel, args in route.report(plan)]


def _left_out(
    boards: dict[str, list[q.BoardRow]], shown: dict[str, list[str]], all_topics: list[str], topics: list[str]
) -> list[str]:
    """What the report does not hold pages for, said in words."""
    out = []
    for m, board in boards.items():
        if len(board) > len(shown[m]):
            out.append(
                f"the pages of {len(board) - len(shown[m]):,} of the {len(board):,} runs of {m} (it has the best "
                f"{len(shown[m]):,}; the leaderboard and its data files list them all)"
            )
    if len(all_topics) > len(topics):
        out.append(
            f"the pages of {len(all_topics) - len(topics):,} of the {len(all_topics):,} topics (it has the first "
            f"{len(topics):,} in natural order; run pages list their first {context.PAGE_TOPICS:,} topics)"
        )
    return out


def _at(ctx: Ctx, rel: str) -> Ctx:
    assert isinstance(ctx.links, ReportLinks)
    return replace(ctx, links=ctx.links.at(rel))

"""``evalstore report DIR``: the pages of ``evalstore serve`` written as static HTML files.

The same page builders (:mod:`.pages`) and templates render every page; :class:`~.links.ReportLinks`
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvalstoreError
from ..report.formats import to_bytes
from ..report.table import Table
from ..version import __version__
from . import agree_view, compare_view, contrast_view, leaderboard_view, pages, render
from . import queries as q
from .links import ReportLinks

if TYPE_CHECKING:
    from ..facade import Store

MANIFEST = "evalstore-report.json"


class ReportError(EvalstoreError):
    """The report cannot be written as asked."""


@dataclass
class ReportResult:
    folder: str
    qrels: str
    metrics: list[str]
    runs: int
    topics: int
    files: list[str] = field(default_factory=list)

    @property
    def index(self) -> str:
        return os.path.join(self.folder, "index.html")

    def summary(self) -> str:
        return (
            f"wrote {len(self.files)} files to {self.folder}: the leaderboard{'s' if len(self.metrics) > 1 else ''} of "
            f"{', '.join(self.metrics)} on {self.qrels}, {self.runs} run pages per metric, {self.topics} topic pages "
            f"and the analyses; open {self.index}"
        )


def check_folder(folder: str | os.PathLike) -> Path:
    """The report's folder: new, empty, or holding an earlier report (its manifest); else an error."""
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise ReportError(f"{path} is a file; give a folder for the report")
    if not path.exists():
        if not path.parent.is_dir():
            raise ReportError(f"cannot create {path}: the folder {path.parent} does not exist")
        return path
    if any(path.iterdir()) and not (path / MANIFEST).is_file():
        raise ReportError(
            f"{path} is not empty and holds no earlier report ({MANIFEST}); give a new or empty folder, so that "
            f"no file of yours is overwritten"
        )
    return path


def write_report(
    store: Store,
    folder: str | os.PathLike,
    qrels: str | None = None,
    metrics: Sequence[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ReportResult:
    """Write the static report of ``qrels`` (default: the store's only qrels set with scores) and
    ``metrics`` (default: the metric evaluated for the most runs) into ``folder``."""
    render.require_jinja()
    out = check_folder(folder)
    cat = q.catalogue(store)
    if not cat.metrics:
        raise ReportError("the store holds no scores; evaluate first (evalstore eval --qrels Q -m AP -m nDCG@10)")
    if qrels is None:
        if len(cat.qrels) > 1:
            raise ReportError(
                f"the store has scores on {len(cat.qrels)} qrels sets ({', '.join(cat.qrels[:10])}); "
                f"choose one with --qrels"
            )
        qrels = cat.qrels[0]
    probe = pages.Ctx(store, ReportLinks(qrels, ["-"], {}, set()), cache={})
    names: list[str] = []
    for m in metrics or [None]:  # type: ignore[list-item]
        try:
            _, stored, _ = pages.choose(probe, qrels, m)
        except pages.NotFound as e:
            raise ReportError(str(e)) from None
        if stored not in names:
            names.append(stored)
    boards = {m: q.leaderboard(store, qrels, m) for m in names}
    best = {m: b[0].run for m, b in boards.items() if b}
    topics = q.topics_with_scores(store, qrels, names[0])
    runs = list(dict.fromkeys(r.run for m in names for r in boards[m]))
    judged = [a["id"] for a in agree_view.agreements(store)]
    links = ReportLinks(qrels, names, best, set(topics), runs=runs, agreements=judged)
    ctx = pages.Ctx(store, links, pages.site_title(store.location), cache=dict(probe.cache or {}))
    pair = [r.run for r in boards[names[0]][:2]]

    jobs = _jobs(links, qrels, names, boards, best, topics, pair, judged)

    old = _previous(out)
    out.mkdir(exist_ok=True)
    written: list[str] = []
    total = len(jobs) + 2 * len(names) + len(render.STATIC)
    for i, (rel, build, args, template) in enumerate(jobs, start=1):
        model = build(_at(ctx, rel), *args)
        _write(out, rel, render.render(template, model).encode("utf-8"))
        written.append(rel)
        if progress:
            progress(i, total)
    for m in names:
        cols, rows, _, _ = leaderboard_view.leaderboard_table(_at(ctx, "index.html"), qrels, m)
        for fmt in ("csv", "parquet"):  # the same data files as the server's downloads
            data = to_bytes(Table(cols, rows), fmt)
            rel = links.download_path("leaderboard", fmt, m)
            _write(out, rel, data)
            written.append(rel)
    for name in render.STATIC:
        rel = f"static/{name}"
        _write(out, rel, render.static_bytes(name))
        written.append(rel)
    for rel in sorted(set(old) - set(written)):  # pages of runs or topics no longer in the report
        _remove(out, rel)
    manifest = {"evalstore": __version__, "qrels": qrels, "metrics": names, "files": written}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return ReportResult(str(out), qrels, names, len(boards[names[0]]), len(topics), written + [MANIFEST])


#: a page of the report: (file, page builder, its arguments after the context, template)
Job = tuple[str, Callable[..., dict[str, Any]], tuple[Any, ...], str]


def _jobs(links: ReportLinks, qrels: str, names: list[str], boards, best, topics, pair, judged) -> list[Job]:
    """Every page of the report, in the order written."""
    jobs: list[Job] = []
    board_page = leaderboard_view.leaderboard_page
    jobs.append(("index.html", board_page, (qrels, names), "leaderboard.html"))
    for m in names:
        if len(names) > 1:
            jobs.append((links.leaderboard_path(m), board_page, (qrels, m), "leaderboard.html"))
        for r in boards[m]:
            jobs.append((links.run_path(r.run, m), pages.run_page, (r.run, qrels, m), "run.html"))
            if r.run != best[m]:
                args = (best[m], r.run, qrels, m)
                jobs.append((links.compare_path(r.run, m), compare_view.compare_page, args, "compare.html"))
                if m == names[0]:
                    jobs.append((links.contrast_path(r.run, m), contrast_view.contrast_page, args, "contrast.html"))
    for t in topics:
        jobs.append((links.topic_path(t), pages.topic_page, (t, pair, qrels, names[0]), "topic.html"))
    jobs.append(("meta.html", pages.meta_page, (), "meta.html"))
    jobs += [(links.agree_path(i), agree_view.agree_page, (i,), "agree.html") for i in judged]

    return jobs


def _at(ctx: pages.Ctx, rel: str) -> pages.Ctx:
    assert isinstance(ctx.links, ReportLinks)
    return pages.Ctx(ctx.store, ctx.links.at(rel), ctx.title, ctx.cache)


def _write(out: Path, rel: str, data: bytes) -> None:
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _previous(out: Path) -> list[str]:
    """The files an earlier report in ``out`` wrote (only plain relative paths inside the folder)."""
    try:
        files = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [f for f in files if isinstance(f, str) and not os.path.isabs(f) and ".." not in Path(f).parts]


def _remove(out: Path, rel: str) -> None:
    path = out / rel
    try:
        if path.is_file() and path.resolve().is_relative_to(out.resolve()):
            path.unlink()
    except OSError:
        pass

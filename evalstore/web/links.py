"""Where a page lives: the links of the live server and of the static report, and safe file names.

The views (:mod:`.pages`) never spell a URL themselves: they ask a :class:`Links` object for the
link of a route of the route table (:data:`evalstore.web.routes.ROUTES`) with its view's arguments,
``links.to("run", run, qrels, metric)``. :class:`LiveLinks` gives the addresses of ``evalstore
serve`` (``/``, ``/runs/{run}``, ``/compare``, ``/topics/{topic}``, ``/meta``, ``/sql``: each
route's path, names quoted for a URL, the other arguments as the query). :class:`ReportLinks`
gives relative links between the files of ``evalstore report`` (each route's ``report_path``); it
returns None for a page the report does not hold (the page then shows the name without a link).

File names of the report (:func:`file_name`, :func:`file_names`) are the names themselves where
they are safe file names on every file system (``nDCG@10``, ``AP(rel=2)``, ``dl19-bm25``): only
``A-Z a-z 0-9 . _ @ + = , ( ) -``, no leading dot, no trailing dot, not a device name of Windows,
at most :data:`MAX_FILE_STEM` characters. Any other name keeps its safe characters (the rest
become ``_``) and gets a short hash of the whole name (``<script>`` -> ``_script_-1a2b3c4d``), so
names never reach another folder (``/``, ``..``) and stay distinct. Within one folder of a report
(:func:`file_names`), names that differ only in case (``BM25``, ``bm25``) get the hash too, so they
stay distinct on a file system that ignores case.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlencode

#: The longest file name stem kept as it is; longer names are cut and completed with a hash.
MAX_FILE_STEM = 100
_SAFE = re.compile(r"[A-Za-z0-9._@+=,()\-]+")
_UNSAFE_CHAR = re.compile(r"[^A-Za-z0-9._@+=,()\-]")
#: an argument in a route's address, to put its value in (Starlette's syntax: ``{run:path}``)
_PLACEHOLDER = re.compile(r"{(\w+)(?::\w+)?}")
_WINDOWS_DEVICES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def _hash(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _safe(name: str) -> bool:
    return (
        _SAFE.fullmatch(name) is not None
        and len(name) <= MAX_FILE_STEM
        and not name.startswith(".")
        and not name.endswith(".")
        and name.split(".")[0].lower() not in _WINDOWS_DEVICES
    )


def file_name(name: str, force_hash: bool = False) -> str:
    """A file name stem for ``name``: the name itself when it is safe (see the module docstring),
    else its safe characters and a short hash of the name."""
    if _safe(name) and not force_hash:
        return name
    # dots go too, so that no part before a dot is a device name (con.txt-1a2b3c4d is still CON on Windows)
    kept = _UNSAFE_CHAR.sub("_", name).replace(".", "_")[: MAX_FILE_STEM - 9]
    return f"{kept}-{_hash(name)}" if kept else _hash(name)


def file_names(names: Iterable[str]) -> dict[str, str]:
    """The file name stems of names that share a folder: :func:`file_name`, with a hash also for
    names whose stems differ only in case (distinct on a file system that ignores case)."""
    stems = {n: file_name(n) for n in dict.fromkeys(names)}
    seen: dict[str, list[str]] = {}
    for n, st in stems.items():
        seen.setdefault(st.casefold(), []).append(n)
    for group in seen.values():
        if len(group) > 1:
            for n in group:
                stems[n] = file_name(n, force_hash=True)
    return stems


@dataclass(frozen=True)
class NavItem:
    """An entry of the navigation of every page: its label, the route it opens, the route's address
    on the live server and its file in the static site (None: not there, as the SQL page); the
    links of each say which (:meth:`evalstore.web.links.Links.nav`)."""

    label: str
    page: str
    path: str
    file: str | None


class Page(Protocol):
    """What links need of a route (:class:`evalstore.web.routes.Route`): its address on the live
    server, the names of its view's arguments, and its file in the static site."""

    @property
    def path(self) -> str: ...
    @property
    def params(self) -> tuple[str, ...]: ...
    @property
    def path_params(self) -> set[str]: ...
    @property
    def report_path(self) -> Callable[..., str | None] | None: ...


class Links:
    """Where the pages are: :meth:`to` a page of the route table, given its view's arguments; the
    home page, static files, downloads, pages of a long page and the navigation. See
    :class:`LiveLinks` and :class:`ReportLinks`."""

    live = False

    def __init__(self, pages: Mapping[str, Page]):
        self.pages = pages  # the route table by name

    def to(self, page: str, *args: Any) -> str | None:
        """The link of route ``page`` showing what its view shows for ``args`` (the view's arguments
        after the context, in order; later ones may be left out), or None where this site does not
        have that page."""
        raise NotImplementedError

    def home(self) -> str:
        raise NotImplementedError

    def static(self, name: str) -> str:
        raise NotImplementedError

    def download(self, what: str, fmt: str, qrels: str, metric: str) -> str | None:
        raise NotImplementedError

    def paged(self, href: str | None, page: int) -> str | None:
        """The link of page ``page`` of the page at ``href`` (None: the page has no others)."""
        return None

    def nav(self, item: NavItem) -> str | None:
        """The link of an entry of the navigation (None: this site has no such page)."""
        raise NotImplementedError


def _q(params: Mapping[str, str | Sequence[str] | None]) -> str:
    kept = {k: v for k, v in params.items() if v is not None and v != "" and v != []}
    return ("?" + urlencode(kept, doseq=True)) if kept else ""


def metric_list(metric: str | Sequence[str] | None) -> list[str]:
    """One metric or several, as a list."""
    if metric is None:
        return []
    return [metric] if isinstance(metric, str) else list(metric)


def _text(value: Any) -> str:
    """A value of a URL: several (a pair of runs) joined by commas."""
    return value if isinstance(value, str) else ",".join(map(str, value)) if isinstance(value, Sequence) else str(value)


class LiveLinks(Links):
    """The routes of ``evalstore serve``: a route's address with its path arguments quoted in, the
    others as the query, in the order of the route's arguments (``name*``: repeated)."""

    live = True

    def to(self, page: str, *args: Any) -> str:
        route = self.pages[page]
        if len(args) > len(route.params):
            raise TypeError(f"the {page} page takes {len(route.params)} arguments, not {len(args)}")
        given = {param.rstrip("*"): value for param, value in zip(route.params, args)}
        path = _PLACEHOLDER.sub(lambda m: quote(_text(given[m.group(1)]), safe=""), route.path)
        query = {
            param.rstrip("*"): metric_list(value) if param.endswith("*") else _text(value)
            for param, value in zip(route.params, args)
            if value is not None and param not in route.path_params
        }
        return path + _q(query)

    def home(self) -> str:
        return "/"

    def static(self, name: str) -> str:
        return f"/static/{name}"

    def download(self, what: str, fmt: str, qrels: str, metric: str) -> str:
        return f"/download/{what}.{fmt}" + _q({"qrels": qrels, "metric": metric})

    def nav(self, item: NavItem) -> str:
        return item.path

    def paged(self, href: str | None, page: int) -> str | None:
        if href is None:
            return None
        return href + ("&" if "?" in href else "?") + urlencode({"page": page})


class ReportLinks(Links):
    """Relative links between the files of a static report (see :mod:`.static_site` for its layout).

    A page's file is its route's ``report_path`` (a function of the page's view module: the file
    for the view's arguments, None when the report does not hold that page), relative to ``here``,
    the path of the page being written. ``qrels`` is the report's qrels set, ``metrics`` the metrics
    with pages; ``best`` maps each metric to the run that the comparison pages compare with;
    ``topics`` are the topics with a page, ``runs`` the runs with pages (None: all; their file names
    are chosen together: :func:`file_names`), ``agreements`` the judge comparisons with a page."""

    def __init__(
        self,
        pages: Mapping[str, Page],
        qrels: str,
        metrics: Sequence[str],
        best: dict[str, str],
        topics: set[str],
        here: str = "",
        runs: Sequence[str] | None = None,
        agreements: Sequence[int] | set[int] = (),
    ):
        super().__init__(pages)
        self.qrels, self.metrics, self.best, self.topics = qrels, list(metrics), best, topics
        self.here = here
        self.runs = None if runs is None else set(runs)
        self.agreements = set(agreements)
        self.files = {
            "metric": file_names(self.metrics),
            "run": file_names(list(runs or ())),
            "topic": file_names(sorted(topics)),
        }

    def at(self, here: str) -> ReportLinks:
        other = ReportLinks.__new__(ReportLinks)
        other.__dict__.update(self.__dict__)
        other.here = here
        return other

    def _rel(self, path: str) -> str:
        return quote("../" * self.here.count("/") + path, safe="/@+=,()")

    def stem(self, kind: str, name: str) -> str:
        """The file name stem of a ``metric``, ``run`` or ``topic`` in the report."""
        return self.files[kind].get(name) or file_name(name)

    def per_run_file(self, folder: str, run: str, metric: str) -> str:
        """The file of a page of ``run`` by ``metric`` in ``folder`` (runs, compare, contrast)."""
        return f"{folder}/{self.stem('metric', metric)}/{self.stem('run', run)}.html"

    def has_run(self, run: str) -> bool:
        """Whether the report has pages of ``run``."""
        return self.runs is None or run in self.runs

    def to(self, page: str, *args: Any) -> str | None:
        report_path = self.pages[page].report_path
        path = report_path(self, *args) if report_path is not None else None
        return self._rel(path) if path else None

    def home(self) -> str:
        return self._rel("index.html")

    def download_path(self, what: str, fmt: str, metric: str) -> str:
        return f"{what}-{self.stem('metric', metric)}.{fmt}"

    def nav(self, item: NavItem) -> str | None:
        return self._rel(item.file) if item.file else None

    def static(self, name: str) -> str:
        return self._rel(f"static/{name}")

    def download(self, what: str, fmt: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics
        return self._rel(self.download_path(what, fmt, metric)) if ok else None

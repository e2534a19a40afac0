"""Where a page lives: the links of the live server and of the static report, and safe file names.

The page builders (:mod:`.pages`) never spell a URL themselves: they ask a :class:`Links` object.
:class:`LiveLinks` gives the routes of ``evalstore serve`` (the contract of issue 26: ``/``,
``/runs/{run}``, ``/compare``, ``/topics/{topic}``, ``/meta``, ``/sql``), names quoted for a URL.
:class:`ReportLinks` gives relative links between the files of ``evalstore report``; it returns
None for a page the report does not hold (the page then shows the name without a link).

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode

#: The longest file name stem kept as it is; longer names are cut and completed with a hash.
MAX_FILE_STEM = 100
_SAFE = re.compile(r"[A-Za-z0-9._@+=,()\-]+")
_UNSAFE_CHAR = re.compile(r"[^A-Za-z0-9._@+=,()\-]")
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


class Links:
    """What every page asks for; see :class:`LiveLinks` and :class:`ReportLinks`."""

    live = False

    def home(self) -> str:
        raise NotImplementedError

    def leaderboard(self, qrels: str, metric: str | Sequence[str]) -> str | None:
        """The leaderboard of one metric, or of several side by side."""
        raise NotImplementedError

    def contrast(self, baseline: str, run: str, qrels: str, metric: str) -> str | None:
        """Where two runs' ranked lists differ (the topics by RBO)."""
        raise NotImplementedError

    def run(self, run: str, qrels: str, metric: str) -> str | None:
        raise NotImplementedError

    def leaderboard_ranked(self, qrels: str, metric: str, rank_ci: str) -> str | None:
        """The leaderboard with rank intervals computed by ``rank_ci`` (``""``: the stored ones)."""
        return self.leaderboard(qrels, metric) if not rank_ci else None

    def agree(self, analysis_id: int) -> str | None:
        """The page of a stored judge comparison (``evalstore agree``)."""
        return None

    def compare(self, baseline: str, run: str, qrels: str, metric: str) -> str | None:
        raise NotImplementedError

    def topic(self, topic: str, runs: Sequence[str], qrels: str, metric: str) -> str | None:
        raise NotImplementedError

    def meta(self) -> str | None:
        raise NotImplementedError

    def sql(self, query: str | None = None) -> str | None:
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


def _q(params: dict[str, str | Sequence[str] | None]) -> str:
    kept = {k: v for k, v in params.items() if v is not None and v != "" and v != []}
    return ("?" + urlencode(kept, doseq=True)) if kept else ""


def _metrics(metric: str | Sequence[str]) -> list[str]:
    return [metric] if isinstance(metric, str) else list(metric)


class LiveLinks(Links):
    """The routes of ``evalstore serve``."""

    live = True

    def home(self) -> str:
        return "/"

    def leaderboard(self, qrels: str, metric: str | Sequence[str]) -> str:
        return "/" + _q({"qrels": qrels, "metric": _metrics(metric)})

    def leaderboard_ranked(self, qrels: str, metric: str, rank_ci: str) -> str:
        return "/" + _q({"qrels": qrels, "metric": metric, "rank_ci": rank_ci})

    def agree(self, analysis_id: int) -> str:
        return "/agree" + _q({"id": str(int(analysis_id))})

    def run(self, run: str, qrels: str, metric: str) -> str:
        return f"/runs/{quote(run, safe='')}" + _q({"qrels": qrels, "metric": metric})

    def compare(self, baseline: str, run: str, qrels: str, metric: str) -> str:
        return "/compare" + _q({"baseline": baseline, "run": run, "metric": metric, "qrels": qrels})

    def contrast(self, baseline: str, run: str, qrels: str, metric: str) -> str:
        return "/contrast" + _q({"baseline": baseline, "run": run, "metric": metric, "qrels": qrels})

    def topic(self, topic: str, runs: Sequence[str], qrels: str, metric: str) -> str:
        return f"/topics/{quote(topic, safe='')}" + _q({"runs": ",".join(runs), "qrels": qrels, "metric": metric})

    def meta(self) -> str:
        return "/meta"

    def sql(self, query: str | None = None) -> str:
        return "/sql" + _q({"q": query})

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

    ``here`` is the path of the page being written, relative to the report's folder; ``metrics``
    the metrics with pages, ``qrels`` the report's qrels set; ``best`` maps each metric to the run
    that the comparison pages compare with; ``topics`` are the topics with a page, ``runs`` the runs
    with pages (None: all; their file names are chosen together: :func:`file_names`)."""

    def __init__(
        self,
        qrels: str,
        metrics: Sequence[str],
        best: dict[str, str],
        topics: set[str],
        here: str = "",
        runs: Sequence[str] | None = None,
        agreements: Sequence[int] | set[int] = (),
    ):
        self.qrels, self.metrics, self.best, self.topics = qrels, list(metrics), best, topics
        self.here = here
        self.runs = None if runs is None else set(runs)  # the runs with pages (None: every run)
        self.agreements = set(agreements)  # the judge comparisons with a page
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

    def _file(self, kind: str, name: str) -> str:
        return self.files[kind].get(name) or file_name(name)

    def home(self) -> str:
        return self._rel("index.html")

    # the paths of the report's files (relative to its folder)
    def leaderboard_path(self, metric: str | Sequence[str]) -> str:
        ms = _metrics(metric)
        if ms == self.metrics or (len(ms) == 1 and len(self.metrics) == 1 and ms[0] == self.metrics[0]):
            return "index.html"
        return f"leaderboard-{self._file('metric', ms[0])}.html"

    def run_path(self, run: str, metric: str) -> str:
        return f"runs/{self._file('metric', metric)}/{self._file('run', run)}.html"

    def compare_path(self, run: str, metric: str) -> str:
        return f"compare/{self._file('metric', metric)}/{self._file('run', run)}.html"

    def contrast_path(self, run: str, metric: str) -> str:
        return f"contrast/{self._file('metric', metric)}/{self._file('run', run)}.html"

    def topic_path(self, topic: str) -> str:
        return f"topics/{self._file('topic', topic)}.html"

    def download_path(self, what: str, fmt: str, metric: str) -> str:
        return f"{what}-{self._file('metric', metric)}.{fmt}"

    def leaderboard(self, qrels: str, metric: str | Sequence[str]) -> str | None:
        ms = _metrics(metric)
        ok = qrels == self.qrels and (ms == self.metrics or (len(ms) == 1 and ms[0] in self.metrics))
        return self._rel(self.leaderboard_path(ms)) if ok else None

    def run(self, run: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics and (self.runs is None or run in self.runs)
        return self._rel(self.run_path(run, metric)) if ok else None

    def compare(self, baseline: str, run: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics and self.best.get(metric) == baseline and run != baseline
        ok = ok and (self.runs is None or run in self.runs)
        return self._rel(self.compare_path(run, metric)) if ok else None

    def contrast(self, baseline: str, run: str, qrels: str, metric: str) -> str | None:
        # the report's contrast pages: each run against the best run of the first metric
        ok = qrels == self.qrels and metric == self.metrics[0] and self.best.get(metric) == baseline and run != baseline
        ok = ok and (self.runs is None or run in self.runs)
        return self._rel(self.contrast_path(run, metric)) if ok else None

    def topic(self, topic: str, runs: Sequence[str], qrels: str, metric: str) -> str | None:
        # every topic page of the report shows the best run against the second best (by the first metric)
        return self._rel(self.topic_path(topic)) if qrels == self.qrels and topic in self.topics else None

    def meta(self) -> str:
        return self._rel("meta.html")

    def agree_path(self, analysis_id: int) -> str:
        return f"agree-{int(analysis_id)}.html"

    def agree(self, analysis_id: int) -> str | None:
        return self._rel(self.agree_path(analysis_id)) if analysis_id in self.agreements else None

    def sql(self, query: str | None = None) -> None:
        return None  # a static report has no query page

    def nav(self, item: NavItem) -> str | None:
        return self._rel(item.file) if item.file else None

    def static(self, name: str) -> str:
        return self._rel(f"static/{name}")

    def download(self, what: str, fmt: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics
        return self._rel(self.download_path(what, fmt, metric)) if ok else None

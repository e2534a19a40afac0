"""Where a page lives: the links of the live server and of the static report, and safe file names.

The page builders (:mod:`.pages`) never spell a URL themselves: they ask a :class:`Links` object.
:class:`LiveLinks` gives the routes of ``evalstore serve`` (the contract of issue 26: ``/``,
``/runs/{run}``, ``/compare``, ``/topics/{topic}``, ``/meta``, ``/sql``), names quoted for a URL.
:class:`ReportLinks` gives relative links between the files of ``evalstore report``; it returns
None for a page the report does not hold (the page then shows the name without a link).

File names of the report (:func:`file_name`) are made from run names, metric names and topic ids,
which may contain any character: every character but ``a-z`` and ``0-9`` is encoded (an upper
case letter as ``-`` and the letter, anything else as ``_`` and the hex digits of its UTF-8 bytes),
so names map to distinct files, also on a file system that ignores case, and a name can never
reach another folder (``/``, ``..``) or be a device name of Windows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from urllib.parse import quote, urlencode

#: Encodings longer than this are cut and completed with a hash of the whole name (file names are
#: limited to 255 bytes on most file systems).
MAX_FILE_STEM = 120
_WINDOWS_DEVICES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def file_name(name: str) -> str:
    """A file name stem for ``name``: only ``a-z 0-9 - _`` (and ``.`` before a hash, for a very long
    name), distinct for distinct names (see the module docstring)."""
    out: list[str] = []
    for ch in name:
        if "a" <= ch <= "z" or "0" <= ch <= "9":
            out.append(ch)
        elif "A" <= ch <= "Z":
            out.append("-" + ch.lower())
        else:
            out.append("".join(f"_{b:02x}" for b in ch.encode("utf-8")))
    stem = "".join(out)
    if stem in _WINDOWS_DEVICES or stem == "":
        # an escaped first character keeps the name distinct from every other encoding
        stem = (f"_{ord(stem[0]):02x}" + stem[1:]) if stem else "_"
    if len(stem) > MAX_FILE_STEM:
        stem = stem[:MAX_FILE_STEM] + "." + hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return stem


def decode_file_name(stem: str) -> str:
    """The name a :func:`file_name` stem was made from (not for the cut form of a very long name)."""
    if stem == "_":
        return ""
    data = bytearray()
    i = 0
    while i < len(stem):
        ch = stem[i]
        if ch == "-":
            data += stem[i + 1].upper().encode()
            i += 2
        elif ch == "_":
            data.append(int(stem[i + 1 : i + 3], 16))
            i += 3
        else:
            data += ch.encode()
            i += 1
    return data.decode("utf-8")


class Links:
    """What every page asks for; see :class:`LiveLinks` and :class:`ReportLinks`."""

    live = False

    def home(self) -> str:
        raise NotImplementedError

    def leaderboard(self, qrels: str, metric: str) -> str | None:
        raise NotImplementedError

    def run(self, run: str, qrels: str, metric: str) -> str | None:
        raise NotImplementedError

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


def _q(params: dict[str, str | None]) -> str:
    kept = {k: v for k, v in params.items() if v is not None and v != ""}
    return ("?" + urlencode(kept)) if kept else ""


class LiveLinks(Links):
    """The routes of ``evalstore serve``."""

    live = True

    def home(self) -> str:
        return "/"

    def leaderboard(self, qrels: str, metric: str) -> str:
        return "/" + _q({"qrels": qrels, "metric": metric})

    def run(self, run: str, qrels: str, metric: str) -> str:
        return f"/runs/{quote(run, safe='')}" + _q({"qrels": qrels, "metric": metric})

    def compare(self, baseline: str, run: str, qrels: str, metric: str) -> str:
        return "/compare" + _q({"baseline": baseline, "run": run, "metric": metric, "qrels": qrels})

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

    def paged(self, href: str | None, page: int) -> str | None:
        if href is None:
            return None
        return href + ("&" if "?" in href else "?") + urlencode({"page": page})


class ReportLinks(Links):
    """Relative links between the files of a static report (see :mod:`.report` for its layout).

    ``here`` is the path of the page being written, relative to the report's folder; ``metrics``
    the metrics with pages, ``qrels`` the report's qrels set; ``best`` maps each metric to the run
    that the comparison pages compare with; ``topics`` are the topics with a page, ``runs`` the
    runs with pages (None: all)."""

    def __init__(
        self,
        qrels: str,
        metrics: Sequence[str],
        best: dict[str, str],
        topics: set[str],
        here: str = "",
        runs: set[str] | None = None,
    ):
        self.qrels, self.metrics, self.best, self.topics = qrels, list(metrics), best, topics
        self.here = here
        self.runs = runs  # the runs with pages (None: every run)

    def at(self, here: str) -> ReportLinks:
        return ReportLinks(self.qrels, self.metrics, self.best, self.topics, here, self.runs)

    def _rel(self, path: str) -> str:
        return "../" * self.here.count("/") + path

    def home(self) -> str:
        return self._rel("index.html")

    # the paths of the report's files (relative to its folder)
    def leaderboard_path(self, metric: str) -> str:
        return "index.html" if metric == self.metrics[0] else f"index-{file_name(metric)}.html"

    def run_path(self, run: str, metric: str) -> str:
        return f"runs/{file_name(metric)}/{file_name(run)}.html"

    def compare_path(self, run: str, metric: str) -> str:
        return f"compare/{file_name(metric)}/{file_name(run)}.html"

    def topic_path(self, topic: str) -> str:
        return f"topics/{file_name(topic)}.html"

    def download_path(self, what: str, fmt: str, metric: str) -> str:
        return f"{what}-{file_name(metric)}.{fmt}"

    def leaderboard(self, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics
        return self._rel(self.leaderboard_path(metric)) if ok else None

    def run(self, run: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics and (self.runs is None or run in self.runs)
        return self._rel(self.run_path(run, metric)) if ok else None

    def compare(self, baseline: str, run: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics and self.best.get(metric) == baseline and run != baseline
        ok = ok and (self.runs is None or run in self.runs)
        return self._rel(self.compare_path(run, metric)) if ok else None

    def topic(self, topic: str, runs: Sequence[str], qrels: str, metric: str) -> str | None:
        # every topic page of the report shows the best run against the second best (by the first metric)
        return self._rel(self.topic_path(topic)) if qrels == self.qrels and topic in self.topics else None

    def meta(self) -> str:
        return self._rel("meta.html")

    def sql(self, query: str | None = None) -> None:
        return None  # a static report has no query page

    def static(self, name: str) -> str:
        return self._rel(f"static/{name}")

    def download(self, what: str, fmt: str, qrels: str, metric: str) -> str | None:
        ok = qrels == self.qrels and metric in self.metrics
        return self._rel(self.download_path(what, fmt, metric)) if ok else None

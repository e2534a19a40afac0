"""What the web tests share besides fixtures: hostile run names, the store they are built on, and
`evalstore serve` in a subprocess."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import evalstore
from evalstore import meta
from evalstore.base.resources import sample_dir
from evalstore.cli.demo import DEMO_METRICS, run_demo

EVALSTORE = [sys.executable, "-m", "evalstore"]
XSS = "<script>alert(1)</script>"
ODD = "a,b/c?d e%"


def build_store(path: Path) -> Path:
    run_demo(str(path), out=io.StringIO())
    runs = sample_dir() / "runs"
    with evalstore.open(path) as s:
        s.ingest_run(runs / "bm25.txt", name=XSS, progress=False)
        s.ingest_run(runs / "dense.txt", name=ODD, progress=False)
        s.evaluate("sample", [XSS, ODD], DEMO_METRICS)
        meta.kendall(s, "sample", ["AP", "nDCG@10", "P@10"])
        meta.swap(s, "sample", ["AP", "nDCG@10"], trials=100)
        meta.discpower(s, "sample", ["AP", "nDCG@10"], trials=100)
        s.compare("sample", "bm25", None, ["AP"], effects=True, trials=200)
        lexical = {"bm25", "bm25_rm3", XSS}
        groups = {r: ("lexical" if r in lexical else "neural") for r in s.run_names()}
        s.reusability("sample", ["AP", "nDCG@10"], groups=groups, pool_depth=5)
    return path


class Server:
    """`evalstore serve` in a subprocess, on a free port; the URL from its first line."""

    def __init__(self, db: Path, *extra: str):
        self.proc = subprocess.Popen(
            [*EVALSTORE, "serve", "--db", str(db), "--port", "0", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        start = time.monotonic()
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        self.startup = time.monotonic() - start
        m = re.search(r"(http://\S+/)", line)
        if not m:
            self.stop()
            raise AssertionError(f"no URL from evalstore serve: {line!r} {self.proc.stderr.read()!r}")  # type: ignore[union-attr]
        self.url = m.group(1).replace("//0.0.0.0:", "//127.0.0.1:")  # requests stay on the loopback

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=20) as r:
                return r.status, r.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8")

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

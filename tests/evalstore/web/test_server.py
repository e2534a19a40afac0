"""A bounded load test of `evalstore serve` (issue 30.2): parallel clients on every route, beside a
slow SQL request and a writer, on 127.0.0.1 only, for a few seconds. The writer gives no --wait: a
writer that finds the store held by the server waits for it by default (issue 44.2).

Expected: no 500, every answer a page (or a 503 with Retry-After while the writer has the store),
the writer gets in while the clients keep asking, and afterwards the server holds no connection:
the store opens for writing at once."""

from __future__ import annotations

import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest
from websupport import EVALSTORE, Server

import evalstore
from evalstore.base.resources import sample_dir
from evalstore.db import waiting

pytestmark = pytest.mark.load

CLIENTS = 4
MIN_SECONDS = 3.0  # the clients ask at least this long, and until the writer is done
MAX_SECONDS = 25.0  # a hard bound: the writer must be in and out before
ROUTES = (
    "/",
    "/?metric=nDCG@10",
    "/runs/bm25",
    "/compare?baseline=bm25&run=dense",
    "/topics/S01",
    "/topics/S02?runs=bm25,dense&depth=5",
    "/meta",
    "/sql?q=SELECT+run,+mean+FROM+leaderboard+ORDER+BY+mean+DESC",
    "/download/leaderboard.csv",
    "/download/leaderboard.parquet",
    "/download/sql.csv?q=SELECT+count(*)+FROM+scores",
    "/static/evalstore.css",
    "/no/such/page",
)
#: requests the clients make at least (each route several times over)
WANTED = 5 * len(ROUTES)
SLOW_SQL = "/sql?q=SELECT+sum(a.range+*+b.range)+FROM+range(100000)+a,+range(100000)+b"


def _get(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read()
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, dict(e.headers)


def test_parallel_clients_slow_sql_and_a_waiting_writer(web_store, tmp_path):
    run_file = tmp_path / "extra.txt"
    run_file.write_text((sample_dir() / "runs" / "bm25.txt").read_text().replace(" bm25", " extra"))
    with Server(web_store, "--sql-time-limit", "2") as server:
        base = server.url.rstrip("/")
        assert base.startswith("http://127.0.0.1:")
        for route in ("/", "/topics/S01", "/compare?baseline=bm25&run=dense"):  # warm up (imports)
            assert _get(base + route)[0] == 200
        statuses: Counter[int] = Counter()
        by_route: Counter[str] = Counter()
        problems: list[str] = []
        lock = threading.Lock()
        start = time.monotonic()
        writer_done = threading.Event()
        during_writer: Counter[int] = Counter()

        def go_on() -> bool:
            # until the writer is done and every route has been asked several times (a count, not a
            # time: a loaded machine answers fewer requests a second), within the hard bound
            now = time.monotonic() - start
            with lock:
                asked = sum(statuses.values())
            enough = now >= MIN_SECONDS and writer_done.is_set() and asked >= WANTED
            return now < MAX_SECONDS and not enough

        def client(k: int) -> None:
            i = k
            while go_on():
                route = ROUTES[i % len(ROUTES)]
                i += 1
                status, headers = _get(base + route)
                with lock:
                    statuses[status] += 1
                    if writer_running.is_set() and not writer_done.is_set():
                        during_writer[status] += 1
                    by_route[route] += 1
                    expected = 404 if route == "/no/such/page" else 200
                    if status == 503 and "Retry-After" not in headers:
                        problems.append(f"503 without Retry-After on {route}")
                    elif status not in (expected, 503):
                        problems.append(f"{status} on {route}")

        slow: dict[str, float] = {}

        def slow_sql() -> None:
            t0 = time.monotonic()
            slow["status"], _ = _get(base + SLOW_SQL)
            slow["seconds"] = time.monotonic() - t0

        writer_running = threading.Event()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        threads.append(threading.Thread(target=slow_sql))
        for t in threads:
            t.start()
        time.sleep(0.5)  # the clients and the slow query are running: now a writer asks for the store
        t0 = time.monotonic()
        writer_running.set()
        assert (web_store.parent / (web_store.name + waiting.SERVING_SUFFIX)).exists()  # the server says it serves
        writer = subprocess.run(
            [*EVALSTORE, "ingest", "run", str(run_file), "--db", str(web_store)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        writer_seconds = time.monotonic() - t0
        writer_done.set()
        for t in threads:
            t.join(timeout=60)
        assert writer.returncode == 0, writer.stderr  # the writer got in while the clients kept asking
        assert time.monotonic() - start < MAX_SECONDS + 10
        assert sum(during_writer.values()) >= CLIENTS, during_writer
        assert not problems, problems[:10]
        assert 500 not in statuses
        assert statuses[200] >= 4 * len(ROUTES), statuses  # each route answered, many times
        assert all(by_route[r] >= 2 for r in ROUTES), by_route
        assert slow["status"] == 400 and slow["seconds"] < 6, slow  # stopped at the 2 s limit
        # the server holds nothing between requests: the store opens for writing at once
        with evalstore.open(web_store, wait=0) as s:
            assert "extra" in s.run_names()
        status, _ = _get(base + "/runs/extra")  # and the pages show what the writer wrote
        assert status in (200, 404)
        err = server.stop()
    assert not (web_store.parent / (web_store.name + waiting.SERVING_SUFFIX)).exists()  # withdrawn at exit
    assert "internal error" not in err and "Traceback" not in err, err[-2000:]
    print(
        f"\nload: {sum(statuses.values())} requests ({dict(statuses)}); {sum(during_writer.values())} while the "
        f"writer ran ({dict(during_writer)}), writer done after {writer_seconds:.2f} s; slow SQL stopped after "
        f"{slow['seconds']:.2f} s"
    )

"""Opening one store many times in one process and from several threads (issue 30.2): DuckDB hands
every connection to a file the same database instance, whose configuration the first sandboxed
connection locks; a failed open leaves no connection (and no lock) behind; a writer that waits is
let in by a reader that yields to writers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from support import holding_lock

import evalstore
from evalstore.errors import StoreError, StoreLockedError


def test_two_sandboxed_opens_in_one_process(sample_db):
    a = evalstore.open(sample_db, sandbox=True)
    b = evalstore.open(sample_db, sandbox=True)
    try:
        assert a.sql("SELECT count(*) FROM runs", sandbox=True).rows == b.sql("SELECT count(*) FROM runs").rows
        # the second connection is as sandboxed as the first
        with pytest.raises(StoreError):
            b.sql("SELECT * FROM read_csv('/etc/passwd')", sandbox=True)
        assert b.con.execute("SELECT current_setting('enable_external_access')").fetchone()[0] is False
    finally:
        a.close()
        b.close()
    with evalstore.open(sample_db) as w:  # both closed: the store opens for writing
        assert w.run_names()


def test_sandboxed_opens_from_many_threads(sample_db):
    errors: list[BaseException] = []

    def reader() -> None:
        for _ in range(15):
            try:
                with evalstore.open(sample_db, sandbox=True, wait=2) as s:
                    s.sql("SELECT count(*) FROM scores", sandbox=True)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    with evalstore.open(sample_db) as w:
        assert w.run_names()


def test_a_failed_open_leaves_no_connection(sample_db, monkeypatch):
    from evalstore.db import connection

    def broken(con, sandbox):
        raise RuntimeError("setting up the connection failed")

    monkeypatch.setattr(connection, "_prepare", broken)
    for _ in range(3):
        with pytest.raises(RuntimeError):
            evalstore.open(sample_db, sandbox=True)
    monkeypatch.undo()
    # nothing of the failed opens holds the file: another process opens it for writing at once
    code = f"import evalstore; evalstore.open({str(sample_db)!r}, wait=0).close(); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_other_settings_in_one_process_is_a_plain_error(sample_db):
    with evalstore.open(sample_db, sandbox=True):
        with pytest.raises(StoreError, match="already open in this process with other settings"):
            evalstore.open(sample_db)


def test_a_waiting_writer_goes_first(sample_db):
    """A reader that yields to writers sees a busy store while a writer of another process waits."""
    from evalstore.db import waiting

    holder = evalstore.open(sample_db, read_only=True)  # a reader holds the store: the writer must wait
    code = (
        "import evalstore, time; t = time.monotonic(); "
        f"evalstore.open({str(sample_db)!r}, wait=20).close(); print(round(time.monotonic() - t, 2))"
    )
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not waiting.writer_waiting(str(sample_db)):
            assert time.monotonic() < deadline and writer.poll() is None, "the writer never announced itself"
            time.sleep(0.05)
        with pytest.raises(StoreLockedError, match="writer .* is waiting"):
            evalstore.open(sample_db, sandbox=True, yield_to_writers=True)
        evalstore.open(sample_db, read_only=True).close()  # an ordinary reader is not held back
    finally:
        holder.close()
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert not waiting.writer_waiting(str(sample_db))  # the writer withdrew its marker
    assert not (sample_db.parent / (sample_db.name + waiting.SUFFIX)).exists()


def test_a_stale_marker_is_ignored(sample_db):
    from evalstore.db import waiting

    marker = sample_db.parent / (sample_db.name + waiting.SUFFIX)
    marker.write_text("999999999\n")
    import os

    old = time.time() - waiting.FRESH - 5
    os.utime(marker, (old, old))
    with evalstore.open(sample_db, sandbox=True, yield_to_writers=True) as s:
        assert s.run_names()


SERVER_LIKE = """
import os, sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
open(sys.argv[1] + ".serving", "w").write(f"{os.getpid()}\\n") if sys.argv[2] == "server" else None
print("ready", flush=True)
sys.stdin.read()
"""


def _reader(path, role: str):
    """Another process holding the store read-only; ``role`` 'server' announces itself as the
    store's server (as `evalstore serve` does), 'reader' does not."""
    return holding_lock(path, role, script=SERVER_LIKE)


def test_a_writer_waits_for_the_server_by_default_and_names_it(sample_db, monkeypatch):
    """A writer that finds the store held by `evalstore serve` waits (SERVER_WAIT seconds) without
    --wait, and says that the server holds it; held by another reader, it fails at once as before
    (issue 44.2)."""
    from evalstore.db import waiting

    monkeypatch.setattr(waiting, "SERVER_WAIT", 1.5)
    with _reader(sample_db, "server") as pid:
        t0 = time.monotonic()
        with pytest.raises(StoreLockedError) as e:
            evalstore.open(sample_db)
        assert time.monotonic() - t0 >= 1.5
        assert f"is being read by `evalstore serve` (PID {pid})" in str(e.value) and "within 1.5 s" in str(e.value)
        with pytest.raises(StoreLockedError, match="--wait 0 asked not to wait"):
            evalstore.open(sample_db, wait=0)
    assert (sample_db.parent / (sample_db.name + waiting.SERVING_SUFFIX)).exists()  # as a killed server leaves it
    with _reader(sample_db, "reader") as pid:  # the marker names a process that holds no lock: ignored
        t0 = time.monotonic()
        with pytest.raises(StoreLockedError) as e:
            evalstore.open(sample_db)
        assert time.monotonic() - t0 < 1.0
        assert f"open in another process (PID {pid})" in str(e.value) and "serve" not in str(e.value)


def test_serving_marks_the_store_while_it_runs(tmp_path):
    from evalstore.db import waiting

    loc = str(tmp_path / "s.duckdb")
    with waiting.serving(loc):
        assert waiting.held_by_server(loc, f"Conflicting lock is held in python (PID {os.getpid()}) by user x")
        assert not waiting.held_by_server(loc, "Conflicting lock is held in python (PID 1) by user x")
        assert not waiting.held_by_server(loc, "Conflicting lock")
    assert not os.path.exists(loc + waiting.SERVING_SUFFIX)

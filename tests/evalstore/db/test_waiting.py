"""Opening one store many times in one process and from several threads (issue 30.2): DuckDB hands
every connection to a file the same database instance, whose configuration the first sandboxed
connection locks; a failed open leaves no connection (and no lock) behind; a writer that waits is
let in by a reader that yields to writers."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

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

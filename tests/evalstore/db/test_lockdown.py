"""Locked-down connections (evalstore/db/lockdown.py): what DuckDB guarantees, read back; the
private spill folder; the sandbox without evalstore's Python functions over lists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalstore
from evalstore.db import lockdown
from evalstore.errors import StoreError
from evalstore.metrics import sql_functions


def _settings(s, *names):
    return [s.con.execute("SELECT current_setting(?)", [n]).fetchone()[0] for n in names]


@pytest.mark.parametrize("how", [{"query_only": True}, {"sandbox": True}])
def test_the_guarantees_are_duckdbs_settings(sample_db, how):
    with evalstore.open(sample_db, **how) as s:
        external, locked, autoload, autoinstall = _settings(
            s,
            "enable_external_access",
            "lock_configuration",
            "autoload_known_extensions",
            "autoinstall_known_extensions",
        )
        assert (external, locked, autoload, autoinstall) == (False, True, False, False)
        assert s.read_only and s.lockdown is (
            lockdown.Lockdown.SANDBOX if "sandbox" in how else lockdown.Lockdown.QUERY
        )
        assert s.sql("SELECT count(*) FROM runs").rows[0][0] == 6
        functions = {r[0] for r in s.con.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
        lists = sql_functions.list_function_names()
        assert (lists <= functions) is ("sandbox" not in how)
        assert "metric_name" in functions  # the scalar ones are there in both


def test_a_connection_that_is_not_locked_down_is_not_handed_out(sample_db, monkeypatch):
    from evalstore.db import connection

    monkeypatch.setattr(connection, "lock_down", lambda con, level: None)
    with pytest.raises(StoreError, match="could not be set up safely: .*not locked"):
        evalstore.open(sample_db, query_only=True)


def test_a_sandbox_refuses_an_instance_with_the_python_functions_over_lists(sample_db):
    with evalstore.open(sample_db, sandbox=True) as s:
        s.con.create_function("ndpm", lambda a, b: 0.0, ["DOUBLE[]", "DOUBLE[]"], "DOUBLE")  # as another opener would
        with pytest.raises(StoreError, match="Python functions over lists .*ndpm"):
            evalstore.open(sample_db, sandbox=True)


def test_query_and_sandbox_stores_need_a_file():
    for how in ({"query_only": True}, {"sandbox": True}):
        with pytest.raises(StoreError, match="store file"):
            evalstore.open(":memory:", **how)


def test_the_spill_folder_is_private_and_goes_with_the_process(sample_db, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    code = (
        "import evalstore, os, sys\n"
        f"s = evalstore.open({str(sample_db)!r}, query_only=True, temp_directory={str(spill)!r})\n"
        "print(s.con.execute(\"SELECT current_setting('temp_directory')\").fetchone()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    folder = Path(out.stdout.strip())
    assert out.returncode == 0, out.stderr
    assert folder.parent == spill.resolve() and folder.name.startswith("evalstore-sql-")
    assert not folder.exists() and list(spill.iterdir()) == []  # removed when the process ended
    one = lockdown.private_spill_folder(str(spill))
    assert lockdown.private_spill_folder(str(spill)) == one and oct(os.stat(one).st_mode & 0o777) == "0o700"
    assert lockdown.private_spill_folder("") == ""

"""Files written whole or not at all (evalstore/base/output_file.py)."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from evalstore.base.output_file import OutputPathError, replacing


def test_a_failure_midway_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "q.json"
    target.write_text('{"old": true}\n')
    with pytest.raises(OSError, match="No space"):
        with replacing(target) as fh:
            fh.write('{"new": ')
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.json"]


def test_no_file_is_left_when_a_new_one_fails(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with replacing(tmp_path / "lb.parquet", binary=True) as fh:
            fh.write(b"PAR1")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_permissions_are_those_open_gives_or_those_of_the_replaced_file(tmp_path):
    old = os.umask(0o022)
    try:
        with replacing(tmp_path / "new.txt") as fh:
            fh.write("x\n")
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644  # not mkstemp's 0600
        kept = tmp_path / "kept.txt"
        kept.write_text("a")
        kept.chmod(0o640)
        with replacing(kept) as fh:
            fh.write("b")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "b"
    finally:
        os.umask(old)


def test_a_link_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    with replacing(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_a_folder_is_refused_and_a_device_written_directly(tmp_path):
    with pytest.raises(OutputPathError, match="is a folder"):
        with replacing(tmp_path):
            pass
    with replacing("/dev/null") as fh:  # nothing can be renamed over a device: written as it is
        fh.write("x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)

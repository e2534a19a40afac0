"""Malformed input is refused cleanly: every file of the generated corpus (tests/fuzz_corpus.py)
gives exit code 1, a message naming the file (and the line where there is one) and what was wrong,
no traceback, and a store file that is byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from fuzz_corpus import cases, write
from support import SAMPLE

import evalstore
from evalstore.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write(tmp_path_factory.mktemp("corpus"))


@pytest.fixture
def store_file(tmp_path):
    db = tmp_path / "store.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt"))[:2], progress=False)
    return db


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_corpus_is_large_enough():
    assert len(cases()) >= 60
    assert len({name for name, *_ in cases()}) == len(cases())


def test_every_malformed_file_is_refused_and_the_store_is_unchanged(corpus, store_file, capsys, monkeypatch):
    monkeypatch.delenv("EVALSTORE_DB", raising=False)
    before = _sha(store_file)
    refused = unchanged = 0
    problems = []
    for path, kind, expect in corpus:
        argv = ["evalstore", "ingest", kind, str(path), "--db", str(store_file)]
        monkeypatch.setattr(sys, "argv", argv)
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code
        _, err = capsys.readouterr()
        ok = code == 1 and path.name in err and expect in err.lower() and "Traceback" not in err
        refused += ok
        if not ok:
            problems.append((path.name, code, err[:300]))
        same = _sha(store_file) == before
        unchanged += same
        if not same:
            problems.append((path.name, "store changed"))
            before = _sha(store_file)
    assert not problems, problems
    assert refused == unchanged == len(corpus)

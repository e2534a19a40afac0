"""`export run` on TREC DL 2019 (evalstore.ingest.run_export): every run file comes back byte for byte, its
sha256 the run's runs.sha256, from the line formats kept at ingest alone (issue 44.7)."""

from __future__ import annotations

import gzip
import hashlib

import pytest
from support import DATA_DIR, need_shared

import evalstore


@pytest.mark.shared
@pytest.mark.slow
def test_trec_dl_2019_runs_come_back_byte_for_byte(tmp_path):
    runs = need_shared(DATA_DIR / "trec-dl-2019-passage" / "runs")
    files = sorted(runs.glob("*.gz"))
    assert len(files) == 37
    with evalstore.open(tmp_path / "dl19.duckdb") as s:
        results = s.ingest_run(files, progress=False)
        # every file has one shape: only its format is kept, no text (the store's size is unchanged)
        assert s.sql("SELECT count(*) FROM run_text_data").rows == [(0,)]
        assert s.sql("SELECT count(*) FROM runs WHERE exact_text").rows == [(37,)]
        for f, res in zip(files, results):
            out = tmp_path / "out.run.gz"
            exported = s.export_run(res.name, out)
            text = gzip.decompress(out.read_bytes())
            assert text == gzip.decompress(f.read_bytes()), f.name
            (sha,) = s.sql("SELECT sha256 FROM runs WHERE name = ?", [res.name]).rows[0]
            assert exported.exact and exported.sha256 == sha == hashlib.sha256(text).hexdigest()

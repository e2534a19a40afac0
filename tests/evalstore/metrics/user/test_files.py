"""--measures FILE.sql: one measure named after the file, or several after '-- @measure NAME'."""

from __future__ import annotations

import pytest

from evalstore.errors import MetricError
from evalstore.metrics import registry
from evalstore.metrics.user.files import read_file, register_files

SQL = "SELECT qrels, run, topic, count(*) AS value FROM ranked GROUP BY ALL"


def test_a_file_is_one_measure_or_several(tmp_path):
    one = tmp_path / "retrieved.sql"
    one.write_text(SQL)
    assert read_file(one) == [("retrieved", SQL)]
    two = tmp_path / "two.sql"
    two.write_text(f"-- two measures\n-- @measure a\n{SQL}\n-- @measure b\n{SQL}\n")
    assert [n for n, _ in read_file(two)] == ["a", "b"]
    try:
        assert register_files([one, two]) == ["retrieved", "a", "b"]
        assert registry.get("a").user.source == "two.sql"  # type: ignore[union-attr]
    finally:
        for n in ("retrieved", "a", "b"):
            registry.unregister_user(n)


def test_a_bad_file_names_itself(tmp_path):
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT * FROM score_data")
    with pytest.raises(MetricError, match="bad.sql: measure bad: reads 'score_data'"):
        register_files([bad])
    with pytest.raises(MetricError, match="cannot read the measures file"):
        register_files([tmp_path / "none.sql"])
    lead = tmp_path / "lead.sql"
    lead.write_text(f"{SQL}\n-- @measure a\n{SQL}")
    with pytest.raises(MetricError, match="SQL before the first"):
        read_file(lead)

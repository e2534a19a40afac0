"""The registry, the SQL files, the tests they name and the generated docs agree with each other.

Each SQL block declares what it reads, needs, uses as placeholders and calls (``-- reads:``,
``-- needs:``, ``-- params:``, ``-- udfs:``; evalstore/metrics/sqlfile.py); the engine trusts
those declarations, so a wrong one is a wrong result or a slow one. These tests fail when a
declaration, a block, a registry entry, its ``tests=`` paths or docs/metrics.md disagree.
"""

import re

import pytest
from support import ROOT

from evalstore.base import python_udf
from evalstore.base.resources import sql_dir
from evalstore.metrics import all_metrics, docs, sqlfile
from evalstore.metrics.registry import CONTEXT_PARAMS

FAMILY_FILES = sorted(p.name for p in sql_dir().glob("*.sql") if p.name not in ("ranked_list.sql", "answer_lists.sql"))


@pytest.mark.parametrize("name", FAMILY_FILES)
def test_every_block_declares_what_it_uses(name):
    assert sqlfile.problems(sqlfile.load(name), python_udf.names()) == []


def test_a_broken_block_is_reported():
    """A block that names cnt without declaring it, declares cg it does not use, uses an undeclared
    placeholder and calls an undeclared UDF: every disagreement is reported."""
    broken = sqlfile.parse_sql_file(
        """-- header
-- @metric Broken
-- reads: rl_judged, rl_ideal
-- needs: cg
-- params: k
SELECT qrels_id, run_id, topic, sum(cnt / rank) FILTER (WHERE rank <= ${k} AND grade >= ${level}) / ndpm([1], [2])
FROM rl_judged GROUP BY qrels_id, run_id, topic
""",
        "broken.sql",
    )
    found = "\n".join(sqlfile.problems(broken, {"ndpm"}))
    assert "declares reads rl_ideal but does not use it" in found
    assert "declares needs cg but does not use it" in found
    assert "uses needs cnt but does not declare it" in found
    assert "uses params level but does not declare it" in found
    assert "uses udfs ndpm but does not declare it" in found


def test_a_block_without_the_ranked_list_is_reported():
    f = sqlfile.parse_sql_file("-- @metric Lonely\n-- reads: run_meta\nSELECT 1 AS value FROM run_meta\n", "x.sql")
    assert any("reads no relation of a judged list" in p for p in sqlfile.problems(f))


def test_comments_do_not_count_as_uses():
    """The P-plus block once built cg because its comment named it."""
    f = sqlfile.parse_sql_file(
        "-- @metric C\n-- reads: rl_judged\nSELECT 1 AS value FROM rl_judged -- cg(r) and cnt\n/* jrank */\n", "c.sql"
    )
    assert sqlfile.problems(f) == []


def test_every_metric_matches_its_block():
    used_blocks = set()
    for spec in all_metrics():
        filename, _, block_name = spec.sql.partition("#")
        f = sqlfile.load(filename)
        assert block_name in f.metrics, f"{spec.name}: no block '-- @metric {block_name}' in sql/{filename}"
        used_blocks.add((filename, block_name))
        block = spec.block
        assert block == f.effective(f.block(block_name)) and spec.block is block  # made once, then the same
        own = {p.name for p in spec.params}
        metric_placeholders = block.params - set(sqlfile.ENGINE_VALUES)
        assert metric_placeholders <= own, f"{spec.name}: SQL uses {metric_placeholders - own}, not parameters of it"
        formula_params = own - set(CONTEXT_PARAMS)
        assert formula_params <= block.params, f"{spec.name}: parameters {formula_params - block.params} unused in SQL"
        uses_cutoff = "k" in block.params
        assert uses_cutoff == (spec.cutoff != "none"), f"{spec.name}: cutoff={spec.cutoff} but SQL k use={uses_cutoff}"
    every_block = {(n, b) for n in FAMILY_FILES for b in sqlfile.load(n).metrics}
    assert every_block - used_blocks == set(), "SQL blocks that no metric uses"


def test_the_registry_names_no_test():
    """The tests find the metrics, not the other way round: a registry entry names no test file (nor
    does what the registry tells users: ``describe()``, docs/metrics.md), so moving a test needs no
    production edit."""
    from evalstore.metrics.registry import describe

    assert all("tests" not in d for d in describe())
    assert "| tests |" not in docs.markdown()


def test_docs_metrics_md_is_generated_from_the_registry():
    current = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert current == docs.markdown(), "docs/metrics.md is out of date: run `python -m evalstore.metrics.docs`"


def test_ranked_list_placeholders_are_filled_by_the_engine():
    """Every ${...} of ranked_list.sql is one of the values ranked_list.build fills."""

    text = (sql_dir() / "ranked_list.sql").read_text()
    used = set(re.findall(r"\$\{([a-z_]+)\}", sqlfile.strip_comments(text)))
    filled = {"qrels_ids", "rel", "gain_expr", "depth", "rank_source", "judged_only", "use_pool", "topic_pairs",
              "topic_filter", "condensed_rank", "running_columns", "ideal_join", "running_window",
              "retrieved_counts"}  # fmt: skip
    assert used == filled

"""Which runs belong together: a mapping file (TREC's runs_metadata.tsv), the runs' ir_metadata
headers, or every run alone; a run without a group is an error that names it."""

from __future__ import annotations

import pytest

from evalstore.errors import PoolError
from evalstore.pool.groups import run_groups

HEADER = "# ir_metadata.start\n# tag: {tag}\n# actor:\n#   team: {team}\n# ir_metadata.end\n"


@pytest.fixture
def grouped(store, tmp_path):
    for tag, team in (("a1", "alpha"), ("a2", "alpha"), ("b1", "beta")):
        path = tmp_path / f"{tag}.run"
        path.write_text(HEADER.format(tag=tag, team=team) + f"q Q0 d1 1 1.0 {tag}\n")
        store.ingest_run(path)
    store.ingest_run({"q": {"d1": 1.0}}, name="bare")
    return store


def test_a_mapping_file_like_trec_s_run_descriptions(grouped, tmp_path):
    tsv = tmp_path / "runs_metadata.tsv"
    tsv.write_text(
        "run_tag\tparticipant\ttype\n"
        "a1\tAlpha U\tauto\n"
        "# a comment\n"
        "a2\tAlpha U\tmanual\n"
        "b1\tBeta Lab\tauto\n"
        "zz\tElse\tauto\n"  # a run of the file that is not analysed
    )
    runs = ["a1", "a2", "b1"]
    assert run_groups(grouped, runs, group_by="participant", groups=tsv) == {
        "a1": "Alpha U", "a2": "Alpha U", "b1": "Beta Lab",
    }  # fmt: skip
    assert run_groups(grouped, runs, groups=tsv)["a2"] == "Alpha U"  # the first column beside the run's
    assert run_groups(grouped, runs, group_by="type", groups=tsv)["a2"] == "manual"
    csv_file = tmp_path / "map.csv"
    csv_file.write_text("team,run\nx,a1\ny,a2\nx,b1\n")  # the run column found by its name
    assert run_groups(grouped, runs, groups=csv_file) == {"a1": "x", "a2": "y", "b1": "x"}
    with pytest.raises(PoolError, match="has no column 'team'; its columns: run_tag, participant, type"):
        run_groups(grouped, runs, group_by="team", groups=tsv)
    with pytest.raises(PoolError, match=r"1 run\(s\) have no group in column participant of .*: bare$"):
        run_groups(grouped, [*runs, "bare"], group_by="participant", groups=tsv)


def test_the_runs_ir_metadata_headers(grouped):
    assert run_groups(grouped, ["a1", "a2", "b1"], group_by="actor.team") == {
        "a1": "alpha",
        "a2": "alpha",
        "b1": "beta",
    }
    assert run_groups(grouped, ["a1"], group_by="$.actor.team") == {"a1": "alpha"}
    with pytest.raises(PoolError, match="'a\\[b' is not a field of the runs' metadata"):
        run_groups(grouped, ["a1"], group_by="a[b")
    with pytest.raises(PoolError, match="have no group in the runs' metadata field 'actor.team': bare .*--groups FILE"):
        run_groups(grouped, ["a1", "bare"], group_by="actor.team")


def test_every_run_alone_and_the_refusals(grouped, tmp_path):
    assert run_groups(grouped, ["a1", "b1"], leave_one_out="runs") == {"a1": "a1", "b1": "b1"}
    with pytest.raises(PoolError, match="needs no grouping"):
        run_groups(grouped, ["a1"], leave_one_out="runs", group_by="x")
    with pytest.raises(PoolError, match="say how runs are grouped"):
        run_groups(grouped, ["a1"])
    with pytest.raises(PoolError, match="groups or runs out at a time, not 'teams'"):
        run_groups(grouped, ["a1"], leave_one_out="teams")
    with pytest.raises(PoolError, match="cannot read the groups file"):
        run_groups(grouped, ["a1"], groups=tmp_path / "missing.tsv")
    short = tmp_path / "short.tsv"
    short.write_text("run\tgroup\na1\n")
    with pytest.raises(PoolError, match="short.tsv, line 2: 1 fields, but the header has 2"):
        run_groups(grouped, ["a1"], groups=short)
    assert run_groups(grouped, ["a1", "b1"], groups={"a1": "g", "b1": "h", "x": "y"}) == {"a1": "g", "b1": "h"}

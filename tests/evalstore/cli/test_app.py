"""The application's entry point: a command line builds only the command it names."""

from __future__ import annotations

import pytest
from support import run_cli

from evalstore.cli import application
from evalstore.cli.app import command_name, command_words, only_the_command


@pytest.mark.parametrize(
    "args, name",
    [
        (["--db", "s.duckdb", "eval", "-m", "AP"], "eval"),
        (["--threads", "2", "--memory-limit", "1GB", "ingest", "run", "x"], "ingest"),
        (["--db=s.duckdb", "--debug", "list", "runs"], "list"),
        (["--help"], None),
        ([], None),
    ],
)
def test_the_command_a_line_names(args, name):
    assert command_name(args) == name


@pytest.mark.parametrize(
    "args, words",
    [
        (["--db", "s.duckdb", "ingest", "run", "x"], ["ingest", "run", "x"]),
        (["--db=s.duckdb", "--debug", "list", "runs"], ["list", "runs"]),
        (["--threads", "2", "--", "eval"], ["eval"]),
        (["--help"], []),
    ],
)
def test_the_words_from_the_command_on(args, words):
    assert command_words(args) == words


def test_only_the_named_command_is_registered_while_it_runs():
    app = application()
    every = (list(app.registered_commands), list(app.registered_groups))
    with only_the_command(["--db", "s.duckdb", "ingest", "run", "x"]):
        assert [g.name for g in app.registered_groups] == ["ingest"] and app.registered_commands == []
    with only_the_command(["evl"]):  # not a command: all of them, for "No such command" and help
        assert (app.registered_commands, app.registered_groups) == every
    assert (app.registered_commands, app.registered_groups) == every


def test_help_and_mistakes_still_see_every_command():
    code, out, err = run_cli("evl")
    assert code == 2 and "Did you mean 'eval'?" in err
    code, out, _ = run_cli("--help")
    assert code == 0 and all(f" {name} " in out for name in ("eval", "ingest", "compare", "export", "metrics"))
    code, out, _ = run_cli("--db", "nowhere.duckdb", "eval", "--help")
    assert code == 0 and "Compute metrics" in out

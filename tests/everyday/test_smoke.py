"""End-to-end smoke tests of the public interfaces on the bundled sample."""

import shlex

from support import run_cli

import evalstore


def test_sample_leaderboard(sample_store):
    res = sample_store.evaluate("sample", None, ["AP", "nDCG@10"])
    table = res.table()
    assert set(table) == {"bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank"}
    assert table["rerank"]["AP"] > table["random"]["AP"]
    lb = sample_store.sql("SELECT run, mean, n_topics FROM leaderboard WHERE metric LIKE 'AP%' ORDER BY mean DESC")
    assert lb.rows[0][0] == "rerank" and lb.rows[0][2] == 8


def test_notebook_api_dicts():
    qrels = {"q1": {"d1": 1, "d2": 2, "d3": 0}, "q2": {"a": 1}}
    run = {"sys": {"q1": {"d1": 2.0, "d9": 1.5, "d2": 1.0}, "q2": {"b": 1.0}}}
    res = evalstore.evaluate(qrels, run, ["AP", "P@2", "map"])
    # q1: relevant d1 at rank 1, d2 at rank 3 -> AP = (1/1 + 2/3)/2
    assert abs(res.value("sys", "q1", "AP") - (1 + 2 / 3) / 2) < 1e-12
    assert res.value("sys", "q1", "map") == res.value("sys", "q1", "AP")
    assert res.value("sys", "q2", "AP") == 0.0
    assert res.value("sys", "q1", "P@2") == 0.5


def test_cli_demo_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_cli("demo")
    assert r.exit_code == 0, r.output
    assert "rerank" in r.output and "leaderboard" in r.output
    # the store is left behind, and the commands printed at the end work on it
    assert (tmp_path / "evalstore-demo.duckdb").exists()
    tries = [ln.strip() for ln in r.output.splitlines() if ln.startswith("  evalstore ")]
    assert len(tries) == 3
    for line in tries:
        again = run_cli(*shlex.split(line)[1:])
        assert again.exit_code == 0, (line, again.output)
    # running it again on the same store is fine (ingesting the same files is a no-op)
    assert run_cli("demo").exit_code == 0


def _every_command(cmd, path=()):
    yield list(path), cmd
    for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
        yield from _every_command(sub, (*path, name))


def test_help_names_values_by_what_they_are_on_every_command():
    """Typer names an argument's value by its type (``<str>`` beside it) and a required argument in
    braces in the usage line (``{FILES...}``); evalstore.cli.help_format names them as argparse
    does. Every command's help, rendered by the bounded Typer, is checked."""
    import re

    import typer.main
    from support import run_cli

    from evalstore.cli import application

    app = application()

    type_names = re.compile(r"<(str|int|float|bool|list\[[a-z]+\]|path|text)>|\{[A-Z_]+(\.\.\.)?\}|\{[a-z_]+\}\.\.\.")
    commands = list(_every_command(typer.main.get_command(app)))
    assert len(commands) > 30
    for path, _ in commands:
        r = run_cli(*path, "--help")
        assert r.exit_code == 0, (path, r.output)
        assert not type_names.search(r.output), (path, type_names.search(r.output)[0])
    out = run_cli("eval", "--help").output
    assert "--metric" in out and "METRIC" in out and "QRELS_FILE RUN_FILE..." in out
    assert "FILES..." in run_cli("ingest", "run", "--help").output


def test_python_cli_py_runs_the_console_script():
    """``python cli.py`` (a checkout's command line) goes through ``evalstore.entry.main``, the
    console script's set-up (no pandas, Arrow's memory pool), not straight to the Typer app."""
    import ast
    import subprocess
    import sys

    from support import ROOT

    from evalstore.entry import version_line

    tree = ast.parse((ROOT / "cli.py").read_text(encoding="utf-8"))
    imports = [(n.module, [a.name for a in n.names]) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imports == [("evalstore.entry", ["main"])]
    out = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == version_line()

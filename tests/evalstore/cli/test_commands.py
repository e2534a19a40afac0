"""A command line imports the module of the command it names, and only that one (evalstore.cli.commands)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from evalstore.cli import application
from evalstore.cli.commands import COMMANDS, MODULES, module_of, registered_name


def _declared(cmd: typer.Typer, prefix: str = "") -> dict[str, str]:
    out = {f"{prefix}{registered_name(c)}": c.callback.__module__.rsplit(".", 1)[1] for c in cmd.registered_commands}
    for g in cmd.registered_groups:
        out.update(_declared(g.typer_instance, f"{g.name} "))
    return out


def test_the_table_is_what_the_modules_declare_in_the_help_order():
    declared = _declared(application())
    assert declared == COMMANDS
    assert list(declared) == list(COMMANDS)  # the help's order: commands, then each group's


@pytest.mark.parametrize(
    "words, module",
    [
        (["eval", "q", "r"], "eval_cmds"),
        (["ingest", "answers", "f"], "answer_cmds"),
        (["ingest", "run", "f"], "store_cmds"),
        (["export", "pool", "p"], "pool_cmds"),
        (["ingest", "--db", "x", "run"], None),  # a group's option first: every module
        (["ingest"], None),
        (["evl"], None),
        ([], None),
    ],
)
def test_the_module_of_a_command_line(words, module):
    assert module_of(words) == module


def _fresh(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_a_command_line_imports_its_command_module_alone(tmp_path):
    """``evalstore eval QRELS RUN`` in a fresh process: the eval module and none of the other command
    modules, nor the meta-evaluation, pools or web server they would bring."""
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 t\n")
    out = _fresh(
        "import sys\n"
        "from evalstore.cli import main\n"
        f"sys.argv = ['evalstore', 'eval', {str(tmp_path / 'q')!r}, {str(tmp_path / 'r')!r}, '-m', 'AP']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('evalstore'))))\n"
    )
    loaded = set(out.split()[-1000:])
    assert "evalstore.cli.eval_cmds" in loaded
    assert not {f"evalstore.cli.{m}" for m in MODULES if m != "eval_cmds"} & loaded
    assert not {"evalstore.meta", "evalstore.pool", "evalstore.web", "evalstore.cli.meta_cmds"} & loaded


def test_the_help_order_whatever_was_loaded_first():
    code = (
        "import typer\nfrom typer.testing import CliRunner\n"
        "from evalstore.cli import application\nfrom evalstore.cli.app import app\n"
        "from evalstore.cli.commands import load\n"
        "{first}"
        "print(CliRunner().invoke(application(), ['--help']).output)\n"
        "print(CliRunner().invoke(application(), ['export', '--help']).output)\n"
    )
    plain = _fresh(code.format(first=""))
    assert (
        _fresh(code.format(first="load(app, ['export', 'pool']); load(app, ['meta', 'swap']); load(app, ['eval'])\n"))
        == plain
    )

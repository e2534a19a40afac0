"""Option values coerced without pydantic where they need no coercion (evalstore.cli.coercion): the
same values as Typer's own adapters, the same errors, and a one-shot ``eval`` that never imports
pydantic."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer._coercion import build_runtime_param
from typer.testing import CliRunner

from evalstore.cli import application
from evalstore.cli.coercion import PlainRuntimeParam, install


def _params() -> list:
    """Every Typer parameter of every command (and group) of the application."""
    out = []

    def walk(cmd) -> None:
        out.extend(cmd.params)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(application()))
    return [p for p in out if hasattr(p, "type_descriptor")]


VALUES = ["x", "", "duckdb", "trec_eval", "csv", "table", "1GB", "50%", "3", "-1", "0.5", "nan", "é", "a b"]


@pytest.mark.parametrize("value", VALUES)
def test_every_parameter_coerces_as_typer_does(value):
    """For each parameter and value (one, or a list of them): the plain coercion gives what Typer's
    adapter gives, or raises the same error."""
    ctx = typer.Context(typer.main.get_command(application()))
    seen = 0
    for p in _params():
        desc = p.type_descriptor
        plain = PlainRuntimeParam(parameter_info=desc.parameter_info, annotation=desc.annotation, descriptor=desc)
        theirs = build_runtime_param(desc)
        given = (value, value) if p.multiple or p.nargs == -1 else value
        try:
            expected = ("ok", repr(theirs.coerce(given, param=p, ctx=ctx)))
        except Exception as e:  # noqa: BLE001  (the error is compared)
            expected = ("error", type(e), str(e))
        try:
            got = ("ok", repr(plain.coerce(given, param=p, ctx=ctx)))
        except Exception as e:  # noqa: BLE001
            got = ("error", type(e), str(e))
        assert got == expected, (p.name, value)
        seen += 1
    assert seen > 100


def test_install_is_idempotent_and_keeps_a_coercion_already_made():
    params = _params()[:5]
    install(params)
    first = [p._runtime_param for p in params]
    install(params)
    assert [p._runtime_param for p in params] == first
    assert all(isinstance(r, PlainRuntimeParam) for r in first)


def test_a_refused_value_is_the_same_usage_error(tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 d1 1\n")
    r.write_text("1 Q0 d1 1 1.0 t\n")
    runner = CliRunner()
    for args, said in (
        (["--format", "nope"], "'nope' is not one of"),
        (["--threads", "x"], "--threads"),
        (["--engine", "sql"], "'sql' is not one of"),
    ):
        got = runner.invoke(application(), ["eval", str(q), str(r), "-m", "AP", *args])
        assert got.exit_code == 2 and said in got.output, got.output


def test_the_one_shot_eval_imports_no_pydantic(tmp_path):
    """``evalstore eval QRELS RUN -m ... --format csv`` in a fresh process: the values need no
    adapter, so pydantic (and Typer's adapters) stay unloaded; a number given loads them."""
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 t\n")
    code = (
        "import sys\n"
        "from evalstore.cli import main\n"
        f"sys.argv = ['evalstore', 'eval', {str(tmp_path / 'q')!r}, {str(tmp_path / 'r')!r}, "
        "'-m', 'AP', '-m', 'nDCG@10', '--format', 'csv'] + sys.argv[1:]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('pydantic' in sys.modules, 'typer._adapters' in sys.modules)\n"
    )
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert plain.stdout.split()[-2:] == ["False", "False"], plain.stdout
    number = subprocess.run([sys.executable, "-c", code, "--threads", "1"], capture_output=True, text=True, check=True)
    assert number.stdout.split()[-2:] == ["True", "True"], number.stdout

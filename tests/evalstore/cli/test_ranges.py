"""Every numeric option of every command has a documented range, checked while the command line is
parsed (issue 30.4 and 30.11): its help ends with the range, and a value outside it (or nan, inf)
is a usage error (exit 2) that names the option, before any work."""

from __future__ import annotations

import re

import pytest
import typer
from support import run_cli

from evalstore.cli import application

app = application()

_RANGE = re.compile(r"\[(?:(?P<lo>[-\d.e+]+)(?P<lop><=|<))?x(?:(?P<hip><=|<)(?P<hi>[-\d.e+^]+))?\]$")


#: the parameter types of numeric options under Typer 0.28 (Click's, vendored)
_NUMERIC = {"IntParamType": int, "FloatParamType": float}


def _commands(cmd=None, path=()):
    cmd = cmd or typer.main.get_command(app)
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _numeric_options():
    out = []
    for path, cmd in _commands():
        for p in cmd.params:
            described = getattr(getattr(p, "type_descriptor", None), "annotation", None)  # Typer 0.29
            ann = described or _NUMERIC.get(type(getattr(p, "type", None)).__name__)
            if ann in (int, float):
                out.append((path, max(p.opts, key=len), ann, p))
    return out


OPTIONS = _numeric_options()


def _outside(ann: type, help_text: str) -> list[str]:
    m = _RANGE.search(help_text.strip())
    assert m, f"no range at the end of the help: {help_text!r}"
    values = []
    if m["lo"] is not None:
        lo = ann(float(m["lo"])) if ann is float else int(m["lo"])
        values.append(str(lo if m["lop"] == "<" else lo - 1))
    if m["hi"] is not None:
        power = re.fullmatch(r"2\^(\d+)-1", m["hi"])  # 2^63-1: a bound too long for the help's column
        hi = 2 ** int(power[1]) - 1 if power else float(m["hi"]) if ann is float else int(m["hi"])
        values.append(repr(hi) if m["hip"] == "<" else str(hi + 1) if ann is int else repr(hi * 2 + 1))
    if ann is float:
        values += ["nan", "inf", "-inf"]
    assert values, f"an unbounded range: {help_text!r}"
    return values


def test_there_are_numeric_options():
    names = {o for _, o, _, _ in OPTIONS}
    assert {"--trials", "--seed", "--alpha", "--cut", "--min-diff", "--level", "--depth", "--threads"} <= names
    assert len(OPTIONS) > 80


@pytest.mark.parametrize("path,option,ann,param", OPTIONS, ids=[f"{' '.join(p)} {o}" for p, o, _, _ in OPTIONS])
def test_numeric_option_has_a_range_checked_before_work(path, option, ann, param, tmp_path):
    missing = tmp_path / "missing.duckdb"
    values = _outside(ann, param.help or "")
    for value in values:  # the option's own check refuses every value outside
        with pytest.raises(typer.BadParameter, match="outside the range"):
            param.callback(None, param, ann(float(value)) if ann is float else int(value))
    # and through the command line (the first value outside and, for floats, nan): exit 2, nothing done
    for value in values[:1] + (["nan"] if ann is float else []):
        args = [*path, option, value] if path else [option, value, "list", "runs"]
        if path and path[-1] not in ("demo",):
            args += ["--db", str(missing)]
        code, text = _parse(args)
        assert code == 2, (args, code, text[-500:])
        assert option in text and "outside the range" in text, (args, text[-500:])
    assert not missing.exists()  # nothing was done


_ROOT = typer.main.get_command(app)


def _parse(args: list[str]) -> tuple[int | None, str]:
    """Run the command line on the built command (as the console script does, without building
    it again): the exit code and message of a usage error."""
    try:
        _ROOT.main(args=args, prog_name="evalstore", standalone_mode=False)
    except Exception as e:  # noqa: BLE001
        return getattr(e, "exit_code", None), e.format_message() if hasattr(e, "format_message") else str(e)
    return 0, ""


@pytest.mark.parametrize(
    "args,option",
    [
        (["repro", "--cut", "9223372036854775808"], "--cut"),
        (["design", "--min-diff", "1e-300"], None),  # in range: checked against the data later
        (["compare", "--alpha", "0"], "--alpha"),
        (["compare", "-B", "0"], "--trials"),
        (["eval", "--seed", "99999999999999999999999"], "--seed"),
        (["meta", "discpower", "--trials", "100000001"], "--trials"),
        (["design", "--alpha", "1e-300", "--min-diff", "0.01", "-m", "AP"], None),
    ],
)
def test_hostile_values(args, option, tmp_path):
    r = run_cli(*args, "--db", str(tmp_path / "missing.duckdb"))
    text = r.output
    if option:
        assert r.exit_code == 2 and option in text and "outside the range" in text, text
    else:
        assert r.exit_code != 70 and "Traceback" not in text


def _leaves(cmd=None, path=()):
    cmd = cmd or typer.main.get_command(app)
    subs = getattr(cmd, "commands", {})
    if not subs:
        yield path
    for name, sub in subs.items():
        yield from _leaves(sub, (*path, name))


def test_ranges_are_whole_in_an_80_column_help():
    """`eval --help` at 80 columns cut the seed's range ([0<=x<=922337203685477580…); the bound is
    written 2^63-1 (issue 44.10)."""
    from typer.testing import CliRunner

    runner = CliRunner(env={"COLUMNS": "80"})
    for path in _leaves():
        out = runner.invoke(app, [*path, "--help"]).output
        assert not re.search(r"x<?=?[-\d.e+^]*…", out), (path, [line for line in out.splitlines() if "…" in line])
    assert "[0<=x<=2^63-1]" in runner.invoke(app, ["eval", "--help"]).output

"""The Typer the help rule (evalstore/cli/help_format.py) is written for. Typer 0.29 builds a pydantic
TypeAdapter for every option at every parse (pydantic's import and the adapters: about 0.1 CPU-s of
each command); the project bounds Typer at 0.28, which parses with its own Click. A command line
that imports pydantic again (a Typer upgrade) shows here. The help itself is tested on every
command in tests/everyday/test_smoke.py."""

from __future__ import annotations

import subprocess
import sys


def test_a_command_line_parses_its_options_without_pydantic(tmp_path):
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 t\n")
    code = (
        "import sys\n"
        "from evalstore.cli import main\n"
        f"sys.argv = ['evalstore', 'eval', {str(tmp_path / 'q')!r}, {str(tmp_path / 'r')!r}, '-m', 'AP',"
        " '--depth', '10', '--format', 'csv']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('pydantic' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "False", r.stdout
    assert lines[0].startswith("run,"), r.stdout  # the command did its work: a CSV of the run's means

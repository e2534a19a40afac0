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


#: What evaluating runs (``evalstore eval``, files or a store) never uses, and each was imported at
#: its start before: generated answers (``evalstore.api`` imported their evaluation to tell them
#: from ranked lists), the figures (``--plot`` only), the ir_datasets ingest (for a query of the
#: official measures), subsamples (``--subsamples`` only), and the ``Store`` facade with every
#: operation of the library (pools, meta-evaluation, fusion, comparison, the layout...).
NOT_FOR_EVAL = {
    "evalstore.evaluation.answers",
    "evalstore.ingest.answers",
    "evalstore.ingest.nuggets",
    "evalstore.ingest.support",
    "evalstore.ingest.jsonl",
    "evalstore.ingest.datasets",
    "evalstore.ingest.texts",
    "evalstore.output.plots",
    "evalstore.output.figure_data",
    "evalstore.output.figures.model",
    "evalstore.output.matplotlib_backend",
    "evalstore.subsample.create",
    "evalstore.subsample.manage",
    "evalstore.store",
    "evalstore.comparison",
    "evalstore.explain",
    "evalstore.fusion",
    "evalstore.judges",
    "evalstore.layout",
    "evalstore.meta",
    "evalstore.pool",
    "evalstore.repro",
}


def _modules_after(args: list[str]) -> set[str]:
    """The evalstore modules a fresh process has imported once ``evalstore ARGS`` has run."""
    out = _fresh(
        "import sys\n"
        "from evalstore.cli import main\n"
        f"sys.argv = ['evalstore', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('\\nMODULES', ' '.join(sorted(m for m in sys.modules if m.startswith('evalstore'))))\n"
    )
    return set(out.rsplit("\nMODULES ", 1)[1].split())


def test_eval_imports_what_it_uses(tmp_path):
    """Issue 42: ``evalstore eval`` starts in about half a CPU second, and its start-up (imports) is
    most of a one-shot evaluation of 10,000 topics. A fresh process that evaluates files, and one
    that evaluates a store's runs again, import none of :data:`NOT_FOR_EVAL` (said by their names,
    so that a chain that brings one back is found here, not in a benchmark)."""
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    one_shot = _modules_after(["eval", *files, "-m", "AP", "-m", "nDCG@10", "--format", "csv"])
    assert "evalstore.evaluation.in_memory" in one_shot
    assert one_shot & NOT_FOR_EVAL == set()
    db = str(tmp_path / "s.duckdb")
    for words in (["ingest", "qrels", files[0]], ["ingest", "run", files[1]], ["eval", "-m", "AP"]):
        _modules_after(["--db", db, *words])
    again = _modules_after(["--db", db, "eval", "-m", "AP", "--format", "csv"])
    assert "evalstore.evaluation.stored" in again
    assert again & NOT_FOR_EVAL == set()
    # nor, for stored runs, the evaluation of runs given as files or in memory, and its readers
    assert again & {"evalstore.evaluation.in_memory", "evalstore.ingest.tables", "evalstore.ingest.fast"} == set()


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

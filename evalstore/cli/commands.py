"""Which module declares each command, so that a command line imports only the module of the command
it names: ``evalstore eval ...`` loads :mod:`.eval_cmds` and what it imports, not the modules of the
other forty commands (the pools', the meta-evaluation's, the web server's), about half a CPU second
of every short command.

:data:`COMMANDS` is the table: a command's words (``"eval"``, ``"ingest run"``) to its module, in the
order ``--help`` lists them. ``tests/evalstore/cli/test_commands.py`` holds it equal to what the
modules register. A command line that names nothing the table knows (``--help``, a group alone, a
typo) loads every module (:func:`load_all`), so help and "No such command" list them all.
"""

from __future__ import annotations

import importlib

import typer

#: a command's words to the module (of :mod:`evalstore.cli`) that declares it, in the help's order
COMMANDS = {
    "sql": "store_cmds",
    "metrics": "store_cmds",
    "compare": "compare_cmds",
    "eval": "eval_cmds",
    "demo": "demo_cmds",
    "explain": "explain_cmds",
    "fuse": "fusion_cmds",
    "agree": "judge_cmds",
    "repro": "repro_cmds",
    "design": "repro_cmds",
    "serve": "web_cmds",
    "report": "web_cmds",
    "ingest run": "store_cmds",
    "ingest qrels": "store_cmds",
    "ingest topics": "store_cmds",
    "ingest dataset": "store_cmds",
    "ingest docs": "store_cmds",
    "ingest answers": "answer_cmds",
    "ingest nuggets": "answer_cmds",
    "ingest assignments": "answer_cmds",
    "ingest support": "answer_cmds",
    "db status": "store_cmds",
    "db check": "store_cmds",
    "db upgrade": "store_cmds",
    "list runs": "store_cmds",
    "list qrels": "store_cmds",
    "list topics": "store_cmds",
    "list docs": "store_cmds",
    "list nuggets": "answer_cmds",
    "drop run": "store_cmds",
    "drop qrels": "store_cmds",
    "drop topics": "store_cmds",
    "drop docs": "store_cmds",
    "drop nuggets": "answer_cmds",
    "drop pool": "pool_cmds",
    "export leaderboard": "eval_cmds",
    "export run": "fusion_cmds",
    "export store": "layout_cmds",
    "export pool": "pool_cmds",
    "import store": "layout_cmds",
    "import scores": "layout_cmds",
    "measure add": "measure_cmds",
    "measure list": "measure_cmds",
    "measure drop": "measure_cmds",
    "meta kendall": "meta_cmds",
    "meta swap": "meta_cmds",
    "meta discpower": "meta_cmds",
    "meta tests": "meta_cmds",
    "meta robustness": "meta_cmds",
    "meta reusability": "meta_cmds",
    "pool list": "pool_cmds",
    "pool show": "pool_cmds",
    "pool coverage": "pool_cmds",
    "subsample list": "subsample_cmds",
    "subsample show": "subsample_cmds",
    "subsample export": "subsample_cmds",
    "subsample drop": "subsample_cmds",
}

#: every command module (:func:`load_all` puts their commands in the help's order, whatever theirs)
MODULES = tuple(dict.fromkeys(sorted(COMMANDS.values())))


def module_of(words: list[str]) -> str | None:
    """The module declaring the command that ``words`` (the command line after the root's options)
    name: ``["ingest", "run", "x"]`` -> ``store_cmds``; None for a group alone or an unknown word."""
    return COMMANDS.get(" ".join(words[:2])) or COMMANDS.get(" ".join(words[:1]))


def load(app: typer.Typer, words: list[str]) -> None:
    """Import the module of the command ``words`` name, or every module when they name none."""
    name = module_of(words)
    if name is None:
        load_all(app)
    else:
        importlib.import_module(f"{__package__}.{name}")


def load_all(app: typer.Typer) -> None:
    """Import every command module, then put ``app``'s commands in the help's order (whatever order
    earlier command lines of this process imported their modules in)."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
    order = {words: i for i, words in enumerate(COMMANDS)}
    app.registered_commands.sort(key=lambda c: order[registered_name(c)])
    first = {words.split()[0]: i for i, words in reversed(list(enumerate(COMMANDS)))}
    app.registered_groups.sort(key=lambda g: first[str(g.name)])
    for g in app.registered_groups:
        assert g.typer_instance is not None
        prefix = f"{g.name} "
        g.typer_instance.registered_commands.sort(key=lambda c: order[prefix + registered_name(c)])  # noqa: B023


def registered_name(c: typer.models.CommandInfo) -> str:
    """The name a registered command is called by (its own, or its function's)."""
    return c.name or typer.main.get_command_name(c.callback.__name__)  # type: ignore[union-attr]

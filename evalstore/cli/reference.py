"""docs/cli.md, the command-line reference, generated from the Typer application (never edited by
hand): every command and group with its help, usage, arguments and options (their choices and
defaults), in the order ``evalstore --help`` lists them.

python -m evalstore.cli.reference           write docs/cli.md (in a source checkout)
python -m evalstore.cli.reference --check   exit 1 if docs/cli.md is not up to date (tools/check)
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import typer

from ..base import generated
from . import application

DOC_PATH = generated.DOCS / "cli.md"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _help(cmd: Any) -> str:
    return inspect.cleandoc(cmd.help or cmd.short_help or "").strip()


def _default(param: Any) -> str:
    d = param.default
    if getattr(param, "is_flag", False) or d is None or d == () or d == [] or callable(d):
        return ""
    return f"`{d}`"


def _param_row(param: Any) -> str:
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    if param.param_type_name == "argument":
        names = f"`{(param.metavar or param.name).upper()}`"
    argument = param.param_type_name == "argument"
    value = "" if getattr(param, "is_flag", False) or argument else (param.metavar or "")
    if value and not value.startswith("["):
        value = ""
    required = " (required)" if param.required else ""
    return f"| {names} | {_cell(value)} | {_default(param)} | {_cell(getattr(param, 'help', None) or '')}{required} |"


def _command(path: list[str], cmd: Any, level: int) -> list[str]:
    lines = [f"{'#' * level} `{' '.join(path)}`", ""]
    if _help(cmd):
        lines += [_help(cmd), ""]
    params = [p for p in cmd.params if not getattr(p, "hidden", False)]
    if params:
        lines += ["| argument / option | choices | default | meaning |", "|---|---|---|---|"]
        lines += [_param_row(p) for p in params]
        lines.append("")
    subcommands = getattr(cmd, "commands", None) or {}
    for name in subcommands:
        sub = subcommands[name]
        if not getattr(sub, "hidden", False):
            lines += _command([*path, name], sub, min(level + 1, 4))
    return lines


def markdown() -> str:
    root = typer.main.get_command(application())
    lines = [
        "# Command-line reference",
        "",
        "Generated from the command line itself (`python -m evalstore.cli.reference`; `tools/check` fails",
        "when this file is out of date). `evalstore COMMAND -h` prints the same help on a terminal.",
        "",
    ]
    lines += _command(["evalstore"], root, 2)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    return generated.main(DOC_PATH, markdown, "python -m evalstore.cli.reference", argv)


if __name__ == "__main__":
    sys.exit(main())

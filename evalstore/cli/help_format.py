"""How ``--help`` names the values of options and arguments: one rule for every command.

Typer 0.28 (the version the project bounds) names a value by its type (``<str>`` beside an argument)
and a required argument in braces in the usage line (``{FILES...}``). evalstore's help names a value
as argparse does, by what it is: an option's value after its long flag in capitals (``--metric
METRIC``, ``--depth DEPTH``) unless the option gives its own metavar (the choices, ``--db PATH``), a
flag shows no value, an argument its capitalised name (``FILES...``), optional ones in brackets. A
command's help is one line per paragraph (:func:`reflow`): the terminal wraps it, never the source's
line breaks.

:class:`HelpGroup` is the class of every command group (``typer.Typer(cls=HelpGroup)``): it applies
the rule to each command as it is looked up, so no option declaration has to repeat it.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, ClassVar

from typer._click.types import StringParamType  # (Typer 0.28's own Click: no public name for it)
from typer.core import TyperArgument, TyperGroup, TyperOption

#: value names that say more than the flag: what the value is
VALUE_NAMES = {
    "--db": "PATH",
    "--output": "FILE",
    "--temp-dir": "DIR",
    "--memory-limit": "SIZE",
    "--wait": "SECONDS",
    "--threads": "N",
    "--qrels": "NAME",
    "--run": "NAME",
    "--name": "NAME",
    "--baseline": "NAME",
}


class _Argument(TyperArgument):
    """An argument named by its metavar alone (set by :func:`tidy`), with no type beside it: an
    optional one in brackets in the usage line, a required one bare (Typer puts it in braces)."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        name = self.metavar or ""
        return name if self.required or not usage or name.startswith("[") else f"[{name}]"


class _Unnamed(StringParamType):
    """A string argument's type, unnamed in the help (Typer's options panel prints the type's name,
    ``<str>``, beside an argument; its metavar names it)."""

    def get_metavar(self, param: Any, ctx: Any) -> str:
        return ""


_UNNAMED = _Unnamed()


def value_name(option: TyperOption) -> str:
    """The name of an option's value: :data:`VALUE_NAMES`, else its longest flag in capitals
    (``--per-topic`` -> ``PER_TOPIC``), as argparse names it."""
    longest = max(option.opts, key=len)
    return VALUE_NAMES.get(longest) or longest.lstrip("-").replace("-", "_").upper()


def tidy(params: list[Any]) -> None:
    """Give each parameter the help rule above (idempotent; parameters that set a metavar keep it)."""
    for p in params:
        if isinstance(p, TyperArgument):
            if type(p) is TyperArgument:
                p.__class__ = _Argument
                if type(p.type) is StringParamType:
                    p.type = _UNNAMED
                name = p.metavar or (p.name or "").upper()
                p.metavar = name if p.nargs == 1 or name.endswith("...") or " " in name else name + "..."
        elif isinstance(p, TyperOption) and p.metavar is None:
            p.metavar = "" if p.is_flag or p.is_bool_flag else value_name(p)


def reflow(text: str | None) -> str | None:
    """A command's help as paragraphs: the lines of a paragraph (a docstring wrapped at the source's
    width) joined into one, so that the terminal wraps it at its own width instead of breaking
    lines where the source did; paragraphs (blank lines) are kept."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


class HelpGroup(TyperGroup):
    """A command group whose commands (and itself) follow the help rule, their help text reflowed
    (:func:`reflow`), each taking the :attr:`common_params` too."""

    #: options every command takes after its name as well as before it (the root's ``--debug``;
    #: set by :mod:`evalstore.cli.app`): ``evalstore eval ... --debug`` as ``evalstore --debug eval ...``
    common_params: ClassVar[list[Any]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow(self.help)
        for cmd in self.commands.values():
            cmd.help = reflow(cmd.help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        tidy(params)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and not isinstance(cmd, HelpGroup):
            taken = {o for p in cmd.params for o in getattr(p, "opts", ())}
            cmd.params.extend(p for p in self.common_params if not taken & set(p.opts))
            tidy([*cmd.params, cmd.get_help_option(ctx)])
        return cmd

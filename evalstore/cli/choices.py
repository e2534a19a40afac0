"""Options whose value is one of a list, and flags: one rule for every command.

The parser checks the value before the command runs (a usage error, exit 2, naming the choices)
and ``--help`` lists the choices. Other spellings of a choice (aliases, such as ``randomization``
for ``randomisation``) are accepted and turned into the name they stand for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import typer


def choice(
    default: Any,
    *flags: str,
    choices: Sequence[str],
    help: str,
    aliases: Mapping[str, str] | None = None,
) -> Any:
    """An option whose value is one of ``choices`` (or an alias of one, given as the choice)."""
    return typer.Option(
        default,
        *flags,
        parser=choice_parser(choices, aliases),
        metavar="[" + "|".join(choices) + "]",
        help=help,
        show_default=default is not None,
    )


def choice_parser(choices: Sequence[str], aliases: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """The parser of a choice: the choice itself, an alias turned into its choice, else a usage
    error naming the choices."""
    names = tuple(choices)
    spellings = dict(aliases or {})

    def parse(value: str) -> str:
        v = spellings.get(value, value)
        if v not in names:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(names)}")
        return v

    return parse


def flag(*flags: str, help: str, **kwargs: Any) -> Any:
    """A boolean flag (off unless given); ``--help`` shows it without a value."""
    return typer.Option(False, *flags, metavar="", help=help, **kwargs)

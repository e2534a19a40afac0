"""Option values that already are what their parameter declares, passed on without pydantic.

Typer 0.29 (the version the project bounds) coerces the value of every parameter of the command
that runs through a pydantic ``TypeAdapter`` it builds for that parameter on first use, even for a
parameter left at None: ``evalstore eval QRELS RUN`` imported pydantic and built ~35 adapters, about
0.1 CPU-s of a command of one second. :func:`install` gives each parameter a runtime coercion
(:class:`PlainRuntimeParam`) that passes on what Typer's adapter would give back unchanged, a
``str`` for a ``str`` (or each ``str`` of a ``list[str]``), and a parser's value for an option with a
``parser=`` (the choices, ``--memory-limit``), and hands anything else to the adapter, built then:
numbers, flags given a text, a parser that refuses the value (the adapter calls it again and words
the error as before). A parameter left at None needs neither (Typer returns None before coercing).

``tests/evalstore/cli/test_coercion.py`` holds the values equal to the adapter's, and the one-shot
``eval`` free of pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer.core import _TyperParameter

_NOT_PLAIN = object()


@dataclass(frozen=True)
class PlainRuntimeParam(RuntimeParam):
    """Typer's runtime coercion of one parameter, without its adapter where the value is plain
    (see the module docstring); the adapter's coercion is made on the first value that is not."""

    descriptor: TypeDescriptor | None = None
    built: list[RuntimeParam] = field(default_factory=list)  # Typer's own, once made

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        got = plain_value(self.annotation, self.parameter_info.parser, value)
        if got is not _NOT_PLAIN:
            return got
        return self.typers()._coerce_value(value, param=param, ctx=ctx)

    def typers(self) -> RuntimeParam:
        """Typer's coercion of the parameter (its pydantic adapter), made on first use."""
        if not self.built:
            assert self.descriptor is not None
            self.built.append(build_runtime_param(self.descriptor))
        return self.built[0]


def plain_value(annotation: Any, parser: Any, value: Any) -> Any:
    """What Typer's adapter gives for ``value`` when that needs no adapter, else ``_NOT_PLAIN``: a
    ``str`` for a ``str`` (the adapter's ``str(value)`` of a ``str`` is itself), ``parser(value)``
    (the adapter's ``Any`` after its parser) unless the parser raises, a list of those for a list."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (Any,)
        if not isinstance(value, (list, tuple)):
            return _NOT_PLAIN
        items = [plain_value(item, parser, v) for v in value]
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in items) else items
    if type(value) is not str:
        return _NOT_PLAIN
    if parser is not None:
        try:
            return parser(value)
        except Exception:  # noqa: BLE001  (the adapter calls the parser again and words its error)
            return _NOT_PLAIN
    return value if annotation is str else _NOT_PLAIN


def install(params: list[Any]) -> None:
    """Give each Typer parameter of ``params`` without a runtime coercion yet a
    :class:`PlainRuntimeParam` (idempotent)."""
    for p in params:
        if isinstance(p, _TyperParameter) and p._runtime_param is None:
            d = p.type_descriptor
            p._runtime_param = PlainRuntimeParam(parameter_info=d.parameter_info, annotation=d.annotation, descriptor=d)

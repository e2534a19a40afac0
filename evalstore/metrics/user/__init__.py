"""Measures of one's own: a metric defined outside the package, by an SQL block over the ranked,
judged list or by a vectorised Python function, and then used like a built-in one (a stored name,
``explain``, ``compare``, the explorer, Spark where it is SQL).

* :func:`register_measure` (``evalstore.register_measure``): for this process;
* a store keeps SQL definitions (``evalstore measure add NAME --sql FILE``,
  :mod:`.stored`), known to every later command and whoever opens the store;
* ``--measures FILE.sql`` (the command line): for one command.

:mod:`.definition` reads and checks a definition, :mod:`.relations` says what it may read,
:mod:`.sandbox` runs it. docs/measures.md ("Writing your own measure") is the user's guide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...errors import MetricError
from ..registry import get, register_user, unregister_user
from ..spec import MetricSpec
from .definition import UserMeasure, python_measure, sql_measure
from .sandbox import check_runs

__all__ = ["UserMeasure", "define", "register_measure", "spec_of", "unregister_measure"]


def spec_of(measure: UserMeasure) -> MetricSpec:
    """The registry entry of a measure of one's own."""
    where = f"<{measure.language} measure {measure.name}" + (f", {measure.source}>" if measure.source else ">")
    return MetricSpec(
        measure.name,
        where,
        measure.doc or f"a measure of one's own ({measure.language})",
        "defined by its user",
        params=(),
        cutoff=measure.cutoff,
        aggregate=measure.aggregate,
        user=measure,
    )


def define(
    name: str,
    *,
    sql: str | None = None,
    python: Callable[..., Any] | None = None,
    source: str = "python",
    **python_options: Any,
) -> UserMeasure:
    """The checked definition of a measure: ``sql`` (text) or ``python`` (a function, with
    ``reads``, ``cutoff``, ``aggregate``, ``doc``)."""
    if (sql is None) == (python is None):
        raise MetricError(f"measure {name}: give sql=TEXT or python=FUNCTION (one of them)")
    if sql is not None:
        if python_options:
            raise MetricError(
                f"measure {name}: an SQL measure declares {', '.join(sorted(python_options))} in its comment "
                "lines (-- reads: ..., -- cutoff: ..., -- aggregate: ...)"
            )
        measure = sql_measure(name, sql, source)
        return replace(measure, keys=check_runs(measure))
    assert python is not None
    return python_measure(name, python, **python_options)


def register_measure(
    name: str,
    *,
    sql: str | None = None,
    python: Callable[..., Any] | None = None,
    reads: str | tuple[str, ...] | list[str] = ("ranked",),
    cutoff: str | None = None,
    aggregate: str = "mean",
    doc: str = "",
) -> MetricSpec:
    """Register a measure of one's own for this process, from ``sql`` (a SELECT over ``ranked(qrels,
    run, topic, doc, rank, score, grade)`` returning ``qrels, run, topic, value``, with optional
    declarations in its leading comment lines) or ``python`` (a function: the relations it reads as
    Arrow tables in, an Arrow table ``qrels, run, topic, value`` out; ``reads``, ``cutoff``,
    ``aggregate``, ``doc``). It is then a metric like any other (``NAME``, ``NAME@k``) until
    :func:`unregister_measure`; a store keeps SQL definitions with ``Store.add_measure``.
    docs/measures.md ("Writing your own measure")."""
    if sql is not None:
        if (reads, cutoff, aggregate, doc) != (("ranked",), None, "mean", ""):
            raise MetricError(
                f"measure {name}: an SQL measure declares reads, cutoff and aggregate in its comment lines "
                "(-- reads: ranked, judgments; -- cutoff: required; -- aggregate: mean)"
            )
        measure = define(name, sql=sql)
    else:
        measure = define(name, python=python, reads=reads, cutoff=cutoff or "none", aggregate=aggregate, doc=doc)
    return register_user(spec_of(measure))


def unregister_measure(name: str) -> None:
    """Forget a measure of one's own registered in this process."""
    spec = get(name)
    if spec.user is None:
        raise MetricError(f"{name!r} is a built-in metric")
    unregister_user(name)

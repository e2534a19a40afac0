"""The names a package re-exports, imported on first use (PEP 562).

A package's ``__init__`` that imported the modules behind its names would load them, and all they
import, whenever any one of its modules is imported (Python runs the package first): ``evalstore
eval QRELS RUN`` reads one module of :mod:`evalstore.ingest` and would load the store's ingest too.
:func:`exports` gives the package a ``__getattr__`` and a ``__dir__`` over a table of its names:
``evalstore.ingest.ingest_runs`` and ``from evalstore.ingest import ingest_runs`` work as before,
and import :mod:`evalstore.ingest.runs` then."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` of the package named ``package``, whose names ``where`` maps to the
    module defining each, relative to the package (``{"ingest_runs": ".runs"}``): a name is imported
    from its module when first read, and kept in the package's namespace from then on."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return getattr_, dir_

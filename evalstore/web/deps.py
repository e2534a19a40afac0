"""The web extra's libraries: a clear message when they are missing (``pip install "evalstore[web]"``)."""

from __future__ import annotations

import importlib.util

from ..errors import EvalstoreError

#: what ``evalstore serve`` needs; ``evalstore report`` needs only jinja2
SERVER = ("starlette", "uvicorn", "jinja2")
EXTRA = 'pip install "evalstore[web]"'


class MissingExtra(EvalstoreError):
    """A library of the web extra is not installed."""


def require(*modules: str) -> None:
    missing = [m for m in modules if not _importable(m)]
    if missing:
        raise MissingExtra(f"the web pages need {', '.join(missing)}, from the web extra: {EXTRA}")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken installation, or the module blocked in sys.modules
        return False

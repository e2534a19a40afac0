"""Optional libraries: one message, naming the install command, when a call needs one that is absent."""

from __future__ import annotations

from ..errors import MissingDependency


def require_pandas(what: str = "to_df()") -> None:
    """Raise :class:`~evalstore.errors.MissingDependency` naming the install command when pandas
    is not installed."""
    try:
        import pandas  # noqa: F401  (only to know whether it is there)
    except ImportError:
        raise MissingDependency(
            f"{what} needs pandas, which evalstore does not install by default: "
            'pip install "evalstore[pandas]" (or pip install pandas)'
        ) from None

"""Tables as DataFrames and Arrow tables, for notebooks (pandas is optional: ``evalstore[pandas]``)."""

from __future__ import annotations

from typing import Any

from ..errors import MissingDependency
from .table import Table
from .writers import plain_value


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


def arrow(table: Table) -> Any:
    """The table as a pyarrow Table (types inferred from the values; marks dropped)."""
    import pyarrow as pa

    return pa.table({str(c): [plain_value(r[i]) for r in table.rows] for i, c in enumerate(table.columns)})


def pandas(table: Table) -> Any:
    """The table as a pandas DataFrame."""
    require_pandas()
    return arrow(table).to_pandas()

"""Tables as DataFrames and Arrow tables, for notebooks (pandas is optional: ``evalstore[pandas]``)."""

from __future__ import annotations

from typing import Any

from ..base.optional import require_pandas
from .table import Table
from .writers import plain_value


def arrow(table: Table) -> Any:
    """The table as a pyarrow Table (types inferred from the values; marks dropped)."""
    import pyarrow as pa

    return pa.table({str(c): [plain_value(r[i]) for r in table.rows] for i, c in enumerate(table.columns)})


def pandas(table: Table) -> Any:
    """The table as a pandas DataFrame."""
    require_pandas()
    return arrow(table).to_pandas()

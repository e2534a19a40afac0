"""Reports: tables of results (:mod:`.rows`, :mod:`.meta_tables`) and the writers that print them
(:mod:`.writers`). A :class:`~.table.Table` is what a writer consumes."""

from .table import Table

__all__ = ["Table"]

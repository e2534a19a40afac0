"""Reports: tables and the writers that print them (:mod:`.writers`, :mod:`.formats`), the tables of
the meta analyses (:mod:`.meta_tables`), the figures (:mod:`.figures`: one model per figure;
:mod:`.matplotlib_backend` draws them, :mod:`.plots` for ``--plot``) and their data
(:mod:`.figure_data`). A
:class:`~.table.Table` is what a writer consumes. The reports sit below what they present: they
read results and analyses through protocols and import neither (a result's leaderboard is in
:mod:`evalstore.results.tables`)."""

from .table import Table

__all__ = ["Table"]

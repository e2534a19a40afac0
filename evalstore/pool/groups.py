"""Which runs belong together: a participant's runs share the documents they bring into a pool, so
a reusability test leaves out a group at a time (Zobel, SIGIR 1998: "leave one group out").

:func:`run_groups` maps each run to its group, from one of:

* ``leave_one_out='runs'``: every run is a group of its own;
* a mapping file (``groups=PATH``): a table with a header line (tab-separated when its header has a
  tab, else comma-separated), such as TREC's run descriptions (``runs_metadata.tsv``:
  ``run_tag  participant  type ...``). The run column is the first one named ``run``, ``run_tag``,
  ``runid``, ``run_id``, ``tag`` or ``name`` (else the first column); ``group_by`` names the group
  column (default: the first other column);
* the runs' own metadata (``group_by`` without a file): a field of the ir_metadata header each run
  was ingested with (``runs.metadata``), as a dotted path (``actor.team``) or a JSON path
  (``$.actor.team``).

A run without a group (not in the file, no header, no such field, an empty value) is an error that
names the runs; runs of the file that are not analysed are ignored.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import duckdb

from ..errors import PoolError

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: how runs are left out: a group at a time, or a run at a time
LEAVE_OUT = ("groups", "runs")
#: the header names a mapping file's run column goes by
RUN_COLUMNS = ("run", "run_tag", "runid", "run_id", "tag", "name")


def run_groups(
    store: StoreHandle,
    runs: Sequence[str],
    *,
    leave_one_out: str = "groups",
    group_by: str | None = None,
    groups: str | os.PathLike | Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``{run: group}`` for every run of ``runs`` (see the module docstring); ``groups`` may also
    be a ready mapping ``{run: group}``."""
    if leave_one_out not in LEAVE_OUT:
        raise PoolError(f"leave one of the {' or '.join(LEAVE_OUT)} out at a time, not {leave_one_out!r}")
    if leave_one_out == "runs":
        if group_by is not None or groups is not None:
            raise PoolError("leaving one run out at a time needs no grouping: drop --group-by and --groups")
        return {r: r for r in runs}
    if groups is None and group_by is None:
        raise PoolError(
            "say how runs are grouped: --group-by FIELD (a field of the runs' ir_metadata headers, or with "
            "--groups FILE a column of that file), or --leave-one-out runs"
        )
    if isinstance(groups, Mapping):
        found, source = {r: str(groups[r]) for r in runs if groups.get(r) not in (None, "")}, "the mapping given"
    elif groups is not None:
        found, source = _from_file(groups, group_by), f"column {group_by or '2'} of {os.fspath(groups)}"
    else:
        found, source = _from_metadata(store, runs, str(group_by)), f"the runs' metadata field {group_by!r}"
    missing = [r for r in runs if r not in found]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        hint = "" if groups is not None else " (a run without an ir_metadata header has none: give --groups FILE)"
        raise PoolError(f"{len(missing)} run(s) have no group in {source}: {shown}{hint}")
    return {r: found[r] for r in runs}


def _from_metadata(store: StoreHandle, runs: Sequence[str], field: str) -> dict[str, str]:
    """The field of each run's ir_metadata header (a dotted or JSON path; bound, never spliced)."""
    path = field if field.startswith("$") else "$." + field
    try:
        rows = store.con.execute(
            """SELECT name, json_extract_string(metadata, ?) FROM run_meta
               WHERE name IN (SELECT unnest(?::VARCHAR[])) AND metadata IS NOT NULL""",
            [path, list(runs)],
        ).fetchall()
    except duckdb.Error as e:
        raise PoolError(f"{field!r} is not a field of the runs' metadata (write it as actor.team): {e}") from None
    return {name: value for name, value in rows if value not in (None, "")}


def _from_file(path: str | os.PathLike, group_by: str | None) -> dict[str, str]:
    """``{run: group}`` of a mapping file (see the module docstring)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        raise PoolError(f"cannot read the groups file {os.fspath(path)}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise PoolError(f"the groups file {os.fspath(path)} is not UTF-8 text") from None
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    lines = [line for _, line in numbered]
    if len(lines) < 2:
        raise PoolError(
            f"the groups file {os.fspath(path)} needs a header line and a line per run (e.g. 'run<TAB>participant')"
        )
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter="\t" if "\t" in lines[0] else ",")
    header, *rows = [[cell.strip() for cell in row] for row in reader]
    lowered = [h.lower() for h in header]
    run_col = next((lowered.index(c) for c in RUN_COLUMNS if c in lowered), 0)
    if group_by is None:
        others = [i for i in range(len(header)) if i != run_col]
        if not others:
            raise PoolError(f"the groups file {os.fspath(path)} has one column; it needs a run and a group column")
        group_col = others[0]
    elif group_by in header:
        group_col = header.index(group_by)
    else:
        raise PoolError(
            f"the groups file {os.fspath(path)} has no column {group_by!r}; its columns: {', '.join(header)}"
        )
    out: dict[str, str] = {}
    for (n, _), row in zip(numbered[1:], rows):
        if len(row) <= max(run_col, group_col):
            raise PoolError(f"{os.fspath(path)}, line {n}: {len(row)} fields, but the header has {len(header)}")
        if row[group_col]:
            out[row[run_col]] = row[group_col]
    return out

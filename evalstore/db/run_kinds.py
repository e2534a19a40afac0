"""What a run is: ``submitted`` (a system's run, as a track receives it), ``fused`` (made by
``evalstore fuse``) or ``scratch`` (an experiment of one's own), in ``run_meta.kind`` (the
``runs`` view's ``kind``; migration 0019).

Leaderboards (``eval``, ``export leaderboard``), ``design``'s variance estimate and the
meta-evaluation take the runs of every kind unless asked for some (``--kind``), and say which
kinds they included when not every run is a submitted one (:func:`kinds_note`): a fused or scratch
run no longer joins a board or an estimate silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from .handle import StoreHandle

KINDS = ("submitted", "fused", "scratch")
#: what the ingest of a run file makes
DEFAULT = "submitted"


def check_kinds(kinds: str | Sequence[str]) -> list[str]:
    """The kinds asked for (a name, names, or comma-separated names), each one of :data:`KINDS`."""
    given = [kinds] if isinstance(kinds, str) else list(kinds)
    out = list(dict.fromkeys(k.strip() for g in given for k in str(g).split(",") if k.strip()))
    bad = [k for k in out if k not in KINDS]
    if bad or not out:
        raise StoreError(f"unknown run kind {bad[0] if bad else ''!r}; a run is one of {', '.join(KINDS)}")
    return out


def runs_of_kinds(store: StoreHandle, kinds: str | Sequence[str]) -> list[str]:
    """The names of the store's runs of ``kinds``, by name; an error when there is none."""
    wanted = check_kinds(kinds)
    names = [
        str(r[0])
        for r in store.con.execute(
            "SELECT name FROM run_meta WHERE list_contains(?, kind) ORDER BY name", [wanted]
        ).fetchall()
    ]
    if not names:
        have = store.con.execute("SELECT kind, count(*) FROM run_meta GROUP BY kind ORDER BY kind").fetchall()
        shown = ", ".join(f"{n} {k}" for k, n in have) or "none"
        raise StoreError(f"the store has no {' or '.join(wanted)} run (its runs: {shown})")
    return names


def kinds_note(store: StoreHandle, runs: Sequence[str], lead: str = "the leaderboard includes") -> str | None:
    """What ``runs`` hold when not every one is a submitted run: ``the leaderboard includes 37
    submitted, 2 fused and 1 scratch run(s)`` (``lead``: the words before the counts), and how to
    choose."""
    counts = dict(
        store.con.execute(
            "SELECT kind, count(*) FROM run_meta WHERE list_contains(?, name) GROUP BY kind", [list(runs)]
        ).fetchall()
    )
    if set(counts) <= {DEFAULT}:
        return None
    parts = [f"{counts[k]} {k}" for k in KINDS if counts.get(k)]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{lead} {listed} run(s) (--kind submitted keeps the submitted ones)"


def set_kind(store: StoreHandle, runs: str | Sequence[str], kind: str) -> list[str]:
    """Make ``runs`` (names) of ``kind``; returns the names whose kind changed."""
    kinds = check_kinds(kind)
    if len(kinds) != 1:
        raise StoreError(f"a run is of one kind, not {', '.join(kinds)}")
    kind = kinds[0]
    names = [runs] if isinstance(runs, str) else list(runs)
    ids = [store.run_id(n) for n in names]
    changed = [
        str(r[0])
        for r in store.con.execute(
            "SELECT name FROM run_meta WHERE list_contains(?, run_id) AND kind <> ? ORDER BY name", [ids, kind]
        ).fetchall()
    ]
    store.con.execute("UPDATE run_meta SET kind = ? WHERE list_contains(?, run_id)", [kind, ids])
    return changed

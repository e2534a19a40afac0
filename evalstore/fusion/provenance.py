"""How a stored run was made, as the ``runs`` relation, ``list runs`` and the explorer tell it:
the recipe of a fused run and whether its inputs changed since (stale)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass(frozen=True)
class Provenance:
    """A fused run's recipe (``recipe``: as stored, :meth:`Recipe.to_dict`), its description, and
    its input runs that were replaced or dropped since (``changed``: ``(name, 'replaced' |
    'dropped')``)."""

    run: str
    description: str
    recipe: dict[str, Any]
    changed: tuple[tuple[str, str], ...]

    @property
    def stale(self) -> bool:
        return bool(self.changed)

    def text(self) -> str:
        """``fused from A, B by RRF (k = 60)``, and what changed since."""
        if not self.changed:
            return self.description
        what = ", ".join(f"{n} {how}" for n, how in self.changed)
        return f"{self.description}; stale: {what} since"


def provenance(store: StoreHandle, run: str) -> Provenance | None:
    """The recipe of the fused run ``run`` (None: an ingested run, or one replaced since by other
    content)."""
    rows = store.con.execute(
        """SELECT f.description, f.recipe, f.run_id FROM run_meta r
           JOIN fusion_meta f ON f.run_id = r.run_id AND f.sha256 = r.sha256 WHERE r.name = ?""",
        [run],
    ).fetchall()
    if not rows:
        return None
    description, recipe, run_id = rows[0]
    changed = store.con.execute(
        """SELECT i.input_name, CASE WHEN x.run_id IS NULL THEN 'dropped' ELSE 'replaced' END
           FROM fusion_inputs i LEFT JOIN run_meta x ON x.run_id = i.input_id
           WHERE i.run_id = ? AND (x.run_id IS NULL OR x.sha256 <> i.input_sha256) ORDER BY i.position""",
        [run_id],
    ).fetchall()
    return Provenance(run, description, json.loads(recipe), tuple((n, how) for n, how in changed))

"""The layout's ``manifest.json``: what the folder holds, written last by an export and checked
first by an import.

Version 2 (written by this evalstore)::

    {"format": "evalstore-parquet-layout", "layout_version": 2, "schema_version": 17,
     "engine_version": "...",
     "runs":   [{"name", "sha256", "n_rows", "n_topics"}, ...],
     "qrels":  [{"name", "sha256", "n_judged", "n_topics"}, ...],
     "topics": [{"name", "sha256", "n_topics"}, ...], "docs": [{"name", "sha256", "n_docs"}, ...],
     "analyses": 3,
     "files":  {"run_meta.parquet": {"bytes", "rows", "sha256"}, "runs/run=bm25/data_0.parquet": ..., ...}}

Version 1 (earlier evalstores, and other tools writing the layout) has no ``files``, ``topics``,
``docs`` or ``analyses``. :func:`read` refuses a manifest that is not such an object, naming what
is wrong; :func:`check_files` refuses a version 2 folder whose files are not exactly those listed,
byte for byte (a missing, changed or added file); :func:`check_counts` refuses an import whose
rows do not add up to the counts of every run, qrels set, topic set and doc set listed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError

if TYPE_CHECKING:
    import duckdb

FORMAT = "evalstore-parquet-layout"
VERSION = 2
MANIFEST = "manifest.json"

#: each list of named things: the meta table that holds them and their counts (every entry has a
#: name, its sha256 and these counts)
ENTRIES = {
    "runs": ("run_meta", ("n_rows", "n_topics")),
    "qrels": ("qrels_meta", ("n_judged", "n_topics")),
    "topics": ("topic_set_meta", ("n_topics",)),
    "docs": ("doc_set_meta", ("n_docs",)),
}
#: the counts as they are in the rows (checked against both the manifest and the meta tables)
ROW_COUNTS = {
    "runs": "SELECT m.name, count(d.run_id), count(DISTINCT d.topic) FROM run_meta m "
    "LEFT JOIN run_row_data d USING (run_id) WHERE list_contains(?, m.name) GROUP BY m.name",
    # (a set of relevance judgments holds qrels_data rows; a nugget assignment set assignment_data
    # rows over the answers of assigned_answer_data; a support label set support_data rows)
    "qrels": "SELECT m.name, coalesce(d.n, 0), coalesce(d.t, 0) FROM qrels_meta m LEFT JOIN ("
    "  SELECT qrels_id, count(*) AS n, count(DISTINCT topic) AS t FROM qrels_data GROUP BY qrels_id"
    "  UNION ALL SELECT qrels_id, (SELECT count(*) FROM assignment_data x WHERE x.qrels_id = a.qrels_id), "
    "  count(DISTINCT topic) FROM assigned_answer_data a GROUP BY qrels_id"
    "  UNION ALL SELECT qrels_id, count(*), count(DISTINCT topic) FROM support_data GROUP BY qrels_id"
    ") d USING (qrels_id) WHERE list_contains(?, m.name)",
    "topics": "SELECT m.name, count(d.topics_id) FROM topic_set_meta m "
    "LEFT JOIN topic_data d USING (topics_id) WHERE list_contains(?, m.name) GROUP BY m.name",
    "docs": "SELECT m.name, count(d.docs_id) FROM doc_set_meta m "
    "LEFT JOIN doc_data d USING (docs_id) WHERE list_contains(?, m.name) GROUP BY m.name",
}


@dataclass
class Manifest:
    version: int
    entries: dict[str, list[dict[str, Any]]]
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    def names(self, kind: str) -> list[str]:
        return [e["name"] for e in self.entries.get(kind, [])]


def build(con: duckdb.DuckDBPyConnection, folder: Path, schema_version: int, engine_version: str) -> dict[str, Any]:
    """The manifest of a folder just written from ``con``'s store."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "layout_version": VERSION,
        "schema_version": schema_version,
        "engine_version": engine_version,
    }
    for kind, (table, counts) in ENTRIES.items():
        rows = con.execute(f"SELECT name, sha256, {', '.join(counts)} FROM {table} ORDER BY name").fetchall()
        out[kind] = [{"name": r[0], "sha256": r[1], **dict(zip(counts, r[2:]))} for r in rows]
    out["analyses"] = con.execute("SELECT count(*) FROM meta_runs").fetchall()[0][0]
    out["files"] = {name: _describe(folder / name) for name in _parquet_files(folder)}
    return out


#: what other commands add to a layout folder (``eval --engine spark`` writes its scores there)
ADDED_LATER = ("spark_scores",)


def _parquet_files(folder: Path) -> list[str]:
    """The layout's Parquet files, relative to its folder (not those other commands add later)."""
    names = (str(p.relative_to(folder)) for p in folder.rglob("*.parquet"))
    return sorted(n for n in names if Path(n).parts[0] not in ADDED_LATER)


def _describe(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    return {"bytes": path.stat().st_size, "rows": pq.ParquetFile(path).metadata.num_rows, "sha256": _sha(path)}


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read(folder: Path) -> Manifest:
    """The folder's manifest, checked (a StoreError says what is wrong with it)."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise StoreError(f"{folder} is not a folder")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{folder} has no {MANIFEST}: not an evalstore Parquet layout") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreError(f"{path} is not valid JSON ({e}); the layout cannot be read") from None
    if not isinstance(raw, dict):
        raise StoreError(f"{path} holds a JSON {type(raw).__name__}, not an object")
    version = raw.get("layout_version")
    if raw.get("format", FORMAT) != FORMAT or version not in (1, VERSION) or isinstance(version, bool):
        raise StoreError(
            f"{path}: format {raw.get('format')!r}, layout version {version!r}; this evalstore reads "
            f"{FORMAT!r} versions 1 and {VERSION}"
        )
    entries = {kind: _entries(raw, kind, counts, path, required=kind in ("runs", "qrels"))
               for kind, (_, counts) in ENTRIES.items()}  # fmt: skip
    files = _files(raw, path) if version >= 2 else {}
    return Manifest(version, entries, files, raw)


def _entries(raw: dict, kind: str, counts: tuple[str, ...], path: Path, required: bool) -> list[dict[str, Any]]:
    value = raw.get(kind)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise StoreError(
            f"{path}: {kind!r} is a list of objects (name, {', '.join(counts)}), not {type(value).__name__}"
        )
    seen = set()
    for i, e in enumerate(value):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not e["name"]:
            raise StoreError(f"{path}: {kind}[{i}] is not an object with a name")
        for k in counts:
            v = e.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise StoreError(f"{path}: {kind}[{i}] ({e['name']!r}) has no count {k!r} (a whole number)")
        if e["name"] in seen:
            raise StoreError(f"{path}: {kind} lists {e['name']!r} twice")
        seen.add(e["name"])
    return value


def _files(raw: dict, path: Path) -> dict[str, dict[str, Any]]:
    files = raw.get("files")
    if not isinstance(files, dict) or not files:
        raise StoreError(f"{path}: layout version {VERSION} lists its files ('files'), and this one does not")
    for name, f in files.items():
        if not isinstance(f, dict) or not isinstance(f.get("sha256"), str) or not isinstance(f.get("rows"), int):
            raise StoreError(f"{path}: the entry of {name!r} in 'files' has no sha256 and rows")
        if Path(name).is_absolute() or ".." in Path(name).parts or not name.endswith(".parquet"):
            raise StoreError(f"{path}: {name!r} is not a Parquet file inside the layout")
    return files


def check_files(folder: Path, manifest: Manifest) -> None:
    """A version 2 folder holds exactly the files its manifest lists, each byte for byte."""
    present = set(_parquet_files(folder))
    missing = sorted(set(manifest.files) - present)
    extra = sorted(present - set(manifest.files))
    if missing or extra:
        what = [f"missing: {', '.join(missing[:5])}" if missing else ""]
        what.append(f"not listed: {', '.join(extra[:5])}" if extra else "")
        raise StoreError(
            f"{folder} does not hold the files its manifest lists ({'; '.join(w for w in what if w)}); "
            f"nothing was imported"
        )
    for name, f in sorted(manifest.files.items()):
        if _sha(folder / name) != f["sha256"]:
            raise StoreError(
                f"{folder / name} is not the file the manifest lists (its sha256 differs); nothing was imported"
            )


def check_counts(con: duckdb.DuckDBPyConnection, manifest: Manifest, folder: Path) -> None:
    """The imported rows of every run, qrels set, topic set and doc set the manifest lists add up
    to its counts and to those of their meta rows (a StoreError otherwise)."""
    for kind, (table, counts) in ENTRIES.items():
        listed = {e["name"]: tuple(e[k] for k in counts) for e in manifest.entries.get(kind, [])}
        if not listed:
            continue
        query = f"SELECT name, {', '.join(counts)} FROM {table} WHERE list_contains(?, name)"
        meta = {r[0]: tuple(r[1:]) for r in con.execute(query, [list(listed)]).fetchall()}
        rows = {r[0]: tuple(r[1:]) for r in con.execute(ROW_COUNTS[kind], [list(listed)]).fetchall()}
        for name, want in listed.items():
            if meta.get(name) != want or rows.get(name) != want:
                what = {"runs": "run", "qrels": "qrels set", "topics": "topic set", "docs": "doc set"}[kind]
                raise StoreError(
                    f"{folder}: {what} {name!r} should hold {_counts(counts, want)} (manifest), its meta row says "
                    f"{_counts(counts, meta.get(name))} and its rows in the layout make "
                    f"{_counts(counts, rows.get(name))}: a file is missing or does not belong; nothing was imported"
                )


def _counts(keys: tuple[str, ...], values: tuple | None) -> str:
    if values is None:
        return "nothing"
    return ", ".join(f"{k} {v}" for k, v in zip(keys, values))

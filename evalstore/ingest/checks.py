"""Checks of parsed rows, and the error messages that quote the offending line.

The checks are set-based queries over the staging tables (:class:`Staging`); Python looks at a
file again only to quote the line of an error (file, line, text, expectation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import IngestError
from .files import fields, physical_line
from .formats import E_CTL, E_GRADE, E_NF, E_RANK, E_SCORE, INPUT_FORMATS, level_hint
from .staging import Group, SourceFile, Staging

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def validate_call(store: StoreHandle | None, format: str) -> None:
    """Refuse an unknown format or a read-only store before any file is read (no store: the
    files are only read, :mod:`evalstore.ingest.tables`)."""
    if format not in INPUT_FORMATS:
        raise IngestError(f"unknown format {format!r}; use {' or '.join(repr(f) for f in INPUT_FORMATS)}")
    if store is not None and getattr(store, "read_only", False):
        raise IngestError(
            f"the store {store.location} is open read-only; open it with evalstore.open(path) "
            f"(without read_only=True) to ingest"
        )


def row_error(f: SourceFile, ln: int, err: int) -> IngestError:
    lay = f.line_kind
    line_no, text = physical_line(f.path, ln)
    flds = fields(text)
    if err == E_CTL:
        bad = next((c for c in text if (ord(c) < 32 and c not in "\t\r") or ord(c) == 127), "\x01")
        msg = (
            f"the line contains the control character \\x{ord(bad):02x} inside a field; control bytes are not "
            f"allowed in these files (trec_eval would stop reading a name at a NUL)"
        )
    elif err == E_NF:
        want = f"at least {lay.n_fields}" if lay.at_least else str(lay.n_fields)
        msg = f"wrong number of columns ({len(flds)} instead of {want})"
        if lay.name == "res":
            msg = f"a res file has one docno per line, this line has {len(flds)} fields"
    elif err == E_SCORE:
        msg = f"score {flds[4]!r} (column 5) is not a finite number"
    elif err == E_RANK:
        msg = f"rank {flds[3]!r} (column 4) is not an integer"
    elif err == E_GRADE:
        msg = f"grade {flds[3]!r} (column 4) is not an integer"
    else:
        lvl = flds[-1] if flds else ""
        msg = f"relevance level {lvl!r} is not of the form L<n>{level_hint(lvl)}"
    return IngestError(msg, file=f.name, line=line_no, text=text, expected=lay.expected)


def file_stats(st: Staging, extra: str = "") -> dict[int, tuple]:
    """Per file: (n rows, first bad content line, its error code, extra aggregates...)."""
    rows = st.con.execute(f"""
        SELECT file_idx, count(*), min(ln) FILTER (WHERE err > 0), arg_min(err, ln) FILTER (WHERE err > 0) {extra}
        FROM {st.rows} GROUP BY file_idx""").fetchall()
    return {r[0]: r[1:] for r in rows}


def check_file(f: SourceFile, st: tuple | None, *, allow_empty: bool = False, empty_what: str = "lines") -> None:
    """Raise for an empty file or for the file's first bad line."""
    if st is None or st[0] == 0:
        if allow_empty:
            return
        raise IngestError(
            f"empty file: no {empty_what} found (only blank or comment lines, or nothing)",
            file=f.name,
            expected=f.line_kind.expected,
        )
    if st[1] is not None:
        raise row_error(f, int(st[1]), int(st[2]))


def duplicates(st: Staging) -> dict[int, int]:
    """Per group: number of surplus lines of (topic, doc) pairs seen more than once.

    Groups are first screened with h = hash(topic, doc): sorted by h, a repeated pair gives two
    equal neighbours (a collision of different pairs merely sends the group to the exact check)."""
    suspects = [
        r[0]
        for r in st.con.execute(f"""
        SELECT DISTINCT grp FROM (SELECT grp, h = lag(h) OVER (PARTITION BY grp ORDER BY h) AS same
                                  FROM (SELECT grp, hash(topic, doc) AS h FROM {st.rows}))
        WHERE same""").fetchall()
    ]
    if not suspects:
        return {}
    rows = st.con.execute(
        f"""
        SELECT grp, sum(c - 1) FROM (SELECT grp, topic, doc, count(*) AS c FROM {st.rows}
                                     WHERE grp IN (SELECT unnest(?)) GROUP BY grp, topic, doc HAVING count(*) > 1)
        GROUP BY grp""",
        [suspects],
    ).fetchall()
    return {g: int(n) for g, n in rows}


def subtopic_duplicates(st: Staging) -> dict[int, int]:
    """Per group: number of surplus lines of (topic, subtopic, doc) triples seen more than once."""
    rows = st.con.execute(f"""
        SELECT grp, sum(c - 1) FROM (SELECT grp, count(*) AS c FROM {st.rows}
                                     GROUP BY grp, topic, subtopic, doc HAVING count(*) > 1)
        GROUP BY grp""").fetchall()
    return {g: int(n) for g, n in rows}


def first_duplicate(st: Staging, grp: int, by: str = "topic, doc") -> tuple:
    """(file_idx, ln, topic, doc, first_file_idx, first_ln) of the first repeated (topic, doc)
    (or the key ``by``)."""
    return st.con.execute(
        f"""
        SELECT file_idx, ln, topic, doc, first_file, first_ln FROM (
            SELECT file_idx, ln, topic, doc,
                   first_value(file_idx) OVER w AS first_file, first_value(ln) OVER w AS first_ln,
                   row_number() OVER w AS k
            FROM {st.rows} WHERE grp = ? WINDOW w AS (PARTITION BY {by} ORDER BY file_idx, ln))
        WHERE k > 1 ORDER BY file_idx, ln LIMIT 1""",
        [grp],
    ).fetchall()[0]


def drop_duplicates(st: Staging, groups: Sequence[int]) -> None:
    """Delete all but the first occurrence of each repeated (topic, doc) of the groups from the
    staging table (the general reader writes every row's line index, so no line index moves)."""
    raw, g = f"{st.rows}_raw", list(groups)
    st.con.execute(
        f"""
        DELETE FROM {raw} WHERE rowid IN (
            SELECT rid FROM {st.rows} WHERE grp IN (SELECT unnest(?))
            QUALIFY row_number() OVER (PARTITION BY grp, topic, doc ORDER BY file_idx, ln) > 1)""",
        [g],
    )


def group_stats(st: Staging, extra: str = "") -> dict[int, tuple]:
    rows = st.con.execute(f"SELECT grp, count(*), count(DISTINCT topic) {extra} FROM {st.rows} GROUP BY grp").fetchall()
    return {r[0]: r[1:] for r in rows}


def duplicate_error(
    st: Staging,
    g: Group,
    files: list[SourceFile],
    message: str,
    expected: str,
    by: str = "topic, doc",
    subtopic_hint: bool = False,
) -> IngestError:
    """The error for the first repeated (topic, doc) of group g: its line, and where it was first
    seen. ``subtopic_hint``: when the two lines differ in their second column (TREC qrels'
    iteration), say that diversity qrels (a subtopic there) are read with ``--format subtopic``."""
    fi, ln, topic, doc, ffi, fln = first_duplicate(st, g.idx, by)
    f, ff = files[fi], files[ffi]
    first_no, first_text = physical_line(ff.path, int(fln))
    where = f"line {first_no}" + ("" if ff is f else f" of {ff.path}")
    line_no, text = physical_line(f.path, int(ln))
    first_fields, fields_here = first_text.split(), text.split()
    if subtopic_hint and len(first_fields) > 1 and len(fields_here) > 1 and first_fields[1] != fields_here[1]:
        expected += (
            f"; the second column differs ({first_fields[1]!r} and {fields_here[1]!r}): if it holds subtopics "
            "(TREC Web track diversity qrels), ingest with --format subtopic"
        )
    return IngestError(
        message.format(doc=doc, topic=topic, where=where), file=f.name, line=line_no, text=text, expected=expected
    )


#: The longest run or qrels set name (characters): a name is also a folder name of the Parquet
#: layout (``runs/run=<name>``, percent-encoded), which file systems limit to 255 bytes.
MAX_NAME_LENGTH = 200


def check_name(name: str, kind: str) -> str:
    """A run or qrels set name: not empty, at most :data:`MAX_NAME_LENGTH` characters."""
    if not isinstance(name, str) or not name.strip():
        raise IngestError(f"the {kind} name is empty" if isinstance(name, str) else f"a {kind} name is a string")
    if len(name) > MAX_NAME_LENGTH:
        raise IngestError(
            f"the {kind} name {name[:40]!r}... has {len(name)} characters; at most {MAX_NAME_LENGTH} are allowed",
            expected="a shorter --name (or tag)",
        )
    return name


def check_names(groups: Sequence[Group], kind: str, named: Callable[[Group], str | None] | None = None) -> None:
    """Every name valid, and no two groups of one call under one name (``named``: the name of a
    group, by default its final name)."""
    seen: dict[str, Group] = {}
    for g in groups:
        name = named(g) if named is not None else g.final
        assert name is not None
        check_name(name, kind)
        if name in seen:
            other = seen[name]
            raise IngestError(
                f"two files of this call would both be stored as the {kind} {name!r} (also {other.files[0].path})",
                file=str(g.files[0].path),
                expected="distinct run tags, --name-from file, or one call per file"
                if kind == "run"
                else "distinct file names, or --name NAME to combine the files into one set",
            )
        seen[name] = g


def check_replaceable_qrels(con, name: str, qid: int) -> None:
    """A subsample, or a set that subsamples were drawn from, is not replaced behind their back."""
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'subsample_meta'"
    ).fetchall()[0][0]
    if not has_table:
        return
    parent = con.execute(
        "SELECT p.name FROM subsample_meta s JOIN qrels_meta p ON p.qrels_id = s.parent_id WHERE s.qrels_id = ?", [qid]
    ).fetchall()
    if parent:
        raise IngestError(
            f"{name!r} is a subsample of {parent[0][0]!r}, not an ingested qrels set; it cannot be replaced",
            expected=f"ingest under another name, or drop it with `evalstore subsample drop {name}`",
        )
    n = con.execute("SELECT count(*) FROM subsample_meta WHERE parent_id = ?", [qid]).fetchall()[0][0]
    if n:
        raise IngestError(
            f"{n} subsample(s) were drawn from the qrels set {name!r}; replacing its judgments would leave them stale",
            expected=f"drop them first with `evalstore subsample drop --qrels {name}`, or ingest under another name",
        )

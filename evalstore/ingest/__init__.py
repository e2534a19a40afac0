"""Ingestion of TREC and NTCIR runs and qrels into the store.

Files are read by DuckDB's CSV reader (gzip detected by its magic bytes and read transparently),
split and validated in SQL, and written inside one transaction per call: either every file of the
call is stored or none is.

* :mod:`.formats`: the input formats (a registry: layouts, sniffing, expected texts, naming rules);
* :mod:`.files`: paths, globs, compression, sha256, lines read back for messages;
* :mod:`.staging`: the call's files, groups (one run or set each) and temporary tables;
* :mod:`.readers`: the fast and the general reader (SQL);
* :mod:`.checks`: row errors, duplicates, names, and their messages;
* :mod:`.write`: storing in the store's tables, the replace rules;
* :mod:`.runs`, :mod:`.qrels`, :mod:`.dicts`: the entry points.

Rules
-----
* Blank lines, lines whose first non-blank character is ``#``, CRLF (or CR) line ends and
  leading/trailing spaces are accepted. Text must be UTF-8 (a BOM is ignored).
* A run's evaluation rank is trec_eval's order: score descending, ties by docno descending
  (byte-wise). NTCIR res files carry no score: their rank is the file order. ``line_no`` keeps
  the file order (the n-th content line of the file) for NTCIREVAL's convention.
* Run name: ``name``, else the run tag (one tag per file), or the file name with
  ``name_from='file'``. Qrels set name: ``name``, else the file name without its extension.
* sha256 is taken over the bytes of the file as stored (what ``sha256sum FILE`` prints); for a
  run or set made of several files, over their sha256s in order. Re-ingesting identical content
  under the same name is a no-op; different content under an existing name needs ``replace``.
* A docno repeated within one topic of a run is an error (trec_eval refuses such runs);
  ``dedupe=True`` keeps the first occurrence. A docno judged twice in one topic of a qrels set
  is an error.
"""

from typing import TYPE_CHECKING

from ..base.lazy import exports

if TYPE_CHECKING:
    from .dicts import qrels_from_dict, run_from_dict
    from .files import expand_paths, file_sha256
    from .formats import INPUT_FORMATS, LINE_KINDS, InputFormat, LineKind
    from .qrels import ingest_qrels
    from .runs import ingest_runs
    from .write import IngestResult

#: each name to its module, imported on first use (:mod:`evalstore.base.lazy`): the readers
#: without a store (:mod:`.tables`, :mod:`.fast`) come without the store's ingest
__getattr__, __dir__ = exports(
    __name__,
    {
        "qrels_from_dict": ".dicts",
        "run_from_dict": ".dicts",
        "expand_paths": ".files",
        "file_sha256": ".files",
        "INPUT_FORMATS": ".formats",
        "LINE_KINDS": ".formats",
        "InputFormat": ".formats",
        "LineKind": ".formats",
        "ingest_qrels": ".qrels",
        "ingest_runs": ".runs",
        "IngestResult": ".write",
    },
)

__all__ = [
    "INPUT_FORMATS",
    "LINE_KINDS",
    "IngestResult",
    "InputFormat",
    "LineKind",
    "expand_paths",
    "file_sha256",
    "ingest_qrels",
    "ingest_runs",
    "qrels_from_dict",
    "run_from_dict",
]

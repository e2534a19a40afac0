-- evalstore schema, migration 19: what `export run` needs to give an ingested run file back byte
-- for byte (evalstore/ingest/run_text.py), and what a run is (evalstore/db/run_kinds.py).
--
-- * run_meta.line_format: how every line of the run's file is written (JSON: the separators, the
--   second field, the tag, what follows it, the line end, the score's printf format such as %.6f
--   or NULL for the shortest text of the double, whether the last line has its end); set when the lines made from
--   the rows with it hash to the run's sha256. NULL: no format kept.
-- * run_text_data: the file's text itself (its decompressed bytes in parts, each compressed with
--   `codec`), kept when its lines do not all have one shape. Keyed by run_id: dropping or
--   replacing the run drops it.
-- * runs.exact_text: `export run` writes the ingested file byte for byte (a format or the text is
--   kept); false for runs ingested before this migration, fused runs, runs given as DataFrames or
--   dicts and NTCIR res files, which are written as evalstore's own lines.
-- * run_meta.kind (runs.kind): 'submitted' (a system's run, as a track receives it: the default of
--   `ingest run`), 'fused' (made by `evalstore fuse`) or 'scratch' (an experiment of one's own:
--   `ingest run --kind scratch`). Leaderboards (`eval`, `export leaderboard`), `design` and the
--   meta-evaluation take every kind unless `--kind` chooses, and say which kinds they included.
--   Runs stored before this migration are 'fused' when they have a recipe, else 'submitted'.
ALTER TABLE run_meta ADD COLUMN line_format JSON;

CREATE TABLE run_text_data (
    run_id     INTEGER NOT NULL,
    part       INTEGER NOT NULL,
    codec      VARCHAR NOT NULL,
    raw_bytes  BIGINT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (run_id, part)
);

ALTER TABLE run_meta ADD COLUMN kind VARCHAR DEFAULT 'submitted';
UPDATE run_meta SET kind = CASE WHEN run_id IN (SELECT run_id FROM fusion_meta) THEN 'fused' ELSE 'submitted' END;

-- runs: every column of migration 16, then exact_text and kind
DROP VIEW IF EXISTS runs;
CREATE VIEW runs AS
    SELECT r.name, r.tag, r.source, r.sha256, r.n_topics, r.n_rows, r.ingested_at, r.format,
           r.n_dropped_duplicates, r.file_sha256, r.metadata,
           f.description AS recipe,
           f.recipe AS fusion,
           CASE WHEN f.run_id IS NULL THEN NULL ELSE EXISTS (
               SELECT 1 FROM fusion_inputs i LEFT JOIN run_meta x ON x.run_id = i.input_id
               WHERE i.run_id = r.run_id AND (x.run_id IS NULL OR x.sha256 <> i.input_sha256)) END AS stale,
           r.line_format IS NOT NULL OR EXISTS (SELECT 1 FROM run_text_data t WHERE t.run_id = r.run_id) AS exact_text,
           r.kind
    FROM run_meta r
    LEFT JOIN fusion_meta f ON f.run_id = r.run_id AND f.sha256 = r.sha256;

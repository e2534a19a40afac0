-- evalstore schema, migration 14 (issue 34; the lead renumbers it at merge): runs made from runs,
-- and the metadata a run file carries.
--
-- * run_meta.metadata: the run file's ir_metadata header (Breuer et al., SIGIR 2022: YAML in the
--   comment lines between '# ir_metadata.start' and '# ir_metadata.end') as JSON, queryable as
--   metadata->>'$.method.name'; NULL when the file has none. A fused run gets one describing its
--   recipe. metadata_header: the block as it stands in the file, byte for byte (comment marks and
--   line ends included), which `evalstore export run` writes back above the rows.
-- * fusion_meta: how a fused run was made (evalstore/fusion): the recipe as JSON (method,
--   normalisation, parameters, weights, depth, top, ranks, how the weights were chosen), its
--   description ("fused from A, B by RRF (k = 60)") and the content it made (sha256: a run
--   replaced since by other content no longer shows the recipe).
-- * fusion_inputs: the input runs of a fused run in order, with the content hash each had when it
--   was fused. A fused run is stale when an input was replaced (another sha256) or dropped since.
-- Both tables are keyed by run_id (the fused run), so dropping a fused run drops its recipe
-- (drop.py reads the tables with a run_id column from the schema).
ALTER TABLE run_meta ADD COLUMN metadata JSON;
ALTER TABLE run_meta ADD COLUMN metadata_header VARCHAR;

CREATE TABLE fusion_meta (
    run_id       INTEGER PRIMARY KEY,
    recipe       JSON NOT NULL,
    description  VARCHAR NOT NULL,
    sha256       VARCHAR NOT NULL,
    fused_at     TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE fusion_inputs (
    run_id        INTEGER NOT NULL,
    position      INTEGER NOT NULL,
    input_id      INTEGER NOT NULL,
    input_name    VARCHAR NOT NULL,
    input_sha256  VARCHAR NOT NULL,
    weight        DOUBLE,
    PRIMARY KEY (run_id, position)
);

-- runs: every column of migration 10, then
--   metadata  the ir_metadata header (JSON) or NULL
--   recipe    how a fused run was made ("fused from A, B by RRF (k = 60)"); NULL for ingested runs
--   fusion    the recipe as JSON (method, norm, params, weights, depth, top, ranks, inputs with
--             their sha256, optimisation); NULL for ingested runs
--   stale     a fused run whose input runs were replaced or dropped since; NULL for ingested runs
DROP VIEW IF EXISTS runs;
CREATE VIEW runs AS
    SELECT r.name, r.tag, r.source, r.sha256, r.n_topics, r.n_rows, r.ingested_at, r.format,
           r.n_dropped_duplicates, r.file_sha256, r.metadata,
           f.description AS recipe,
           f.recipe AS fusion,
           CASE WHEN f.run_id IS NULL THEN NULL ELSE EXISTS (
               SELECT 1 FROM fusion_inputs i LEFT JOIN run_meta x ON x.run_id = i.input_id
               WHERE i.run_id = r.run_id AND (x.run_id IS NULL OR x.sha256 <> i.input_sha256)) END AS stale
    FROM run_meta r
    LEFT JOIN fusion_meta f ON f.run_id = r.run_id AND f.sha256 = r.sha256;

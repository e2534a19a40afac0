-- evalstore schema, migration 17 (issue 45): measures of one's own, and datasets.
--
-- * measure_defs: the SQL definitions of measures of one's own that the store keeps (`evalstore
--   measure add NAME --sql FILE`, Store.add_measure): known to every later command and to whoever
--   opens the store (evalstore.metrics.user.stored registers them when a store is opened). The
--   definition is kept exactly as given; sha256 is the definition's identity (scores carry it in
--   their params, so a changed definition never reuses them).
-- * dataset_meta: a qrels set ingested from an ir_datasets dataset (`evalstore ingest dataset ID`):
--   the dataset id, the topic set its queries became (by name), its official measures (the
--   dataset's documentation()['official_measures'], else evalstore's fallback table; `eval -q NAME`
--   without -m evaluates them), where they came from, and the relevance definitions of its grades
--   (qrels_defs(): grade -> description). Keyed by qrels_id: dropping the qrels set drops it.
CREATE TABLE measure_defs (
    name        VARCHAR PRIMARY KEY,
    language    VARCHAR NOT NULL,
    definition  VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    source      VARCHAR,
    added_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE dataset_meta (
    qrels_id           INTEGER PRIMARY KEY,
    dataset            VARCHAR NOT NULL,
    topic_set          VARCHAR,
    official_measures  VARCHAR[] NOT NULL,
    measures_source    VARCHAR NOT NULL,
    relevance          JSON,
    ingested_at        TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- measures: name, language (sql), definition (the SQL as given), sha256, source (the file it was
-- read from), added_at
CREATE VIEW measures AS
    SELECT name, language, definition, sha256, source, added_at FROM measure_defs;

-- datasets: qrels (the qrels set), dataset (the ir_datasets id), topics (the topic set of its
-- queries), official_measures, measures_source (ir_datasets or fallback), relevance (grade ->
-- description), ingested_at
CREATE VIEW datasets AS
    SELECT q.name AS qrels, d.dataset, d.topic_set AS topics, d.official_measures, d.measures_source,
           d.relevance, d.ingested_at
    FROM dataset_meta d JOIN qrels_meta q USING (qrels_id);

-- evalstore schema, migration 1: runs, qrels sets, per-topic scores.
--
-- Internal tables carry integer ids (run_id, qrels_id) so that bulk evaluation partitions and
-- joins on small keys; the documented relations (runs, qrels_sets, run_rows, qrels, scores,
-- leaderboard) are views that hide the ids. Topics and docnos are stored as the strings of the
-- input files (byte-wise comparison, as trec_eval's strcmp).

CREATE SEQUENCE run_id_seq START 1;
CREATE SEQUENCE qrels_id_seq START 1;

CREATE TABLE run_meta (
    run_id       INTEGER PRIMARY KEY DEFAULT nextval('run_id_seq'),
    name         VARCHAR NOT NULL UNIQUE,
    tag          VARCHAR,            -- the run tag of the file (6th column), NULL for NTCIR res files
    source       VARCHAR NOT NULL,   -- path(s) as given at ingest
    format       VARCHAR NOT NULL,   -- 'trec' or 'ntcir'
    sha256       VARCHAR NOT NULL,   -- of the uncompressed content of the file(s)
    n_topics     INTEGER NOT NULL,
    n_rows       BIGINT  NOT NULL,
    n_dropped_duplicates BIGINT NOT NULL DEFAULT 0,
    ingested_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per retrieved document. rank = trec_eval's evaluation order (score descending, ties by
-- docno descending, byte-wise), 1-based within (run, topic). line_no = the line of the source
-- file (file order, NTCIREVAL's convention, is the order of line_no within the topic).
CREATE TABLE run_row_data (
    run_id         INTEGER NOT NULL,
    topic          VARCHAR NOT NULL,
    doc            VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    line_no        BIGINT  NOT NULL,
    submitted_rank BIGINT,           -- the rank column as written (ignored by evaluation)
    score          DOUBLE
);

CREATE TABLE qrels_meta (
    qrels_id     INTEGER PRIMARY KEY DEFAULT nextval('qrels_id_seq'),
    name         VARCHAR NOT NULL UNIQUE,
    source       VARCHAR NOT NULL,
    format       VARCHAR NOT NULL,
    sha256       VARCHAR NOT NULL,
    n_topics     INTEGER NOT NULL,
    n_judged     BIGINT  NOT NULL,
    max_grade    INTEGER,
    default_gains VARCHAR,           -- optional declared gains of levels 1..n, e.g. '1:2:3'
    ingested_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- grade: the judged value. >= 1 relevant levels, 0 judged nonrelevant, negative = trec_eval's
-- "in pool but unjudged" (e.g. -1, used by infAP).
CREATE TABLE qrels_data (
    qrels_id INTEGER NOT NULL,
    topic    VARCHAR NOT NULL,
    doc      VARCHAR NOT NULL,
    grade    INTEGER NOT NULL
);

-- One row per (run, qrels, metric, option set) evaluated: what was computed and how to summarise it.
CREATE TABLE evaluations (
    run_id         INTEGER NOT NULL,
    qrels_id       INTEGER NOT NULL,
    metric         VARCHAR NOT NULL,  -- canonical name, parameters sorted and defaults filled
    aggregate      VARCHAR NOT NULL,  -- 'mean', 'gmean' (floor 1e-5, as trec_eval) or 'sum'
    n_topics       INTEGER NOT NULL,
    engine_version VARCHAR NOT NULL,
    computed_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, qrels_id, metric)
);

CREATE TABLE score_data (
    run_id   INTEGER NOT NULL,
    qrels_id INTEGER NOT NULL,
    metric   VARCHAR NOT NULL,
    topic    VARCHAR NOT NULL,
    value    DOUBLE
);

CREATE VIEW runs AS
    SELECT name, tag, source, sha256, n_topics, n_rows, ingested_at, format, n_dropped_duplicates
    FROM run_meta;

CREATE VIEW qrels_sets AS
    SELECT name, source, sha256, n_topics, n_judged, ingested_at, format, max_grade, default_gains
    FROM qrels_meta;

CREATE VIEW run_rows AS
    SELECT m.name AS run, d.topic, d.doc, d.rank, d.score, d.line_no, d.submitted_rank
    FROM run_row_data d JOIN run_meta m USING (run_id);

CREATE VIEW qrels AS
    SELECT m.name AS qrels, d.topic, d.doc, d.grade
    FROM qrels_data d JOIN qrels_meta m USING (qrels_id);

CREATE VIEW scores AS
    SELECT r.name AS run, q.name AS qrels, s.metric, s.topic, s.value, e.engine_version
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric);

CREATE VIEW leaderboard AS
    SELECT r.name AS run, q.name AS qrels, s.metric,
           CASE any_value(e.aggregate)
               WHEN 'gmean' THEN exp(avg(ln(greatest(s.value, 1e-5))))
               WHEN 'sum' THEN sum(s.value)
               ELSE avg(s.value) END AS mean,
           count(s.value) AS n_topics,
           any_value(e.aggregate) AS aggregate
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric)
    GROUP BY r.name, q.name, s.metric;

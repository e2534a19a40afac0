-- evalstore schema, migration 20 (issue 40): generated answers (TREC RAG), nuggets, nugget
-- assignments and citation support labels, evaluated like every other score (docs/rag.md).
--
-- * An answer run is a run (run_meta, unit 'answers'; 'ranking' for a ranked list): its run_row_data rows are each answer's
--   `references` in order (rank = position, 1-based; score = n - position + 1, so every order of
--   every convention keeps the order cited), so the ordinary metrics evaluate what an answer cites
--   against ordinary qrels. answer_data holds one row per (run, topic), answer_sentence_data its
--   sentences with their citations (0-based indexes into the references). Dropping the run drops
--   them (tables keyed by run_id).
-- * A nugget set (nugget_set_meta, nugget_data, nugget_topic_data) is a named, versioned set like
--   a topic set: nuggetizer's nugget files, one line per topic.
-- * A nugget assignment set and a support label set are qrels sets of their own kind
--   (qrels_meta.kind 'nuggets' / 'support'; 'judgments' for relevance judgments), so that their
--   scores are stored, listed and analysed under `qrels = SET` like any other: assignment_data
--   and support_data hold their labels (keyed by qrels_id: dropping the set drops them), with the
--   run by name, as qrels name documents (a judgment outlives the answer it judged; replacing the
--   answer recomputes its scores). A label is also an ordinal grade: 2 support / full, 1
--   partial_support / partial, 0 not_support / none (what `evalstore agree` compares).
ALTER TABLE run_meta ADD COLUMN unit VARCHAR DEFAULT 'ranking';
ALTER TABLE qrels_meta ADD COLUMN kind VARCHAR DEFAULT 'judgments';
ALTER TABLE qrels_meta ADD COLUMN nuggets_id INTEGER;  -- an assignment set's nugget set
UPDATE run_meta SET unit = 'ranking' WHERE unit IS NULL;
UPDATE qrels_meta SET kind = 'judgments' WHERE kind IS NULL;

-- One row per answer. query: the answer line's `topic` text, if any; response_length: the
-- `response_length` the line gives (length_given) or else the words of its sentences (split at
-- whitespace); line_no: the answer's line in its file.
CREATE TABLE answer_data (
    run_id          INTEGER NOT NULL,
    topic           VARCHAR NOT NULL,
    query           VARCHAR,
    response_length INTEGER NOT NULL,
    length_given    BOOLEAN NOT NULL,
    n_sentences     INTEGER NOT NULL,
    n_references    INTEGER NOT NULL,
    line_no         BIGINT NOT NULL
);

-- sentence: 0-based position in the answer; citations: 0-based indexes into the answer's
-- references, as written (the cited documents are run_row_data rows of rank citation + 1)
CREATE TABLE answer_sentence_data (
    run_id    INTEGER NOT NULL,
    topic     VARCHAR NOT NULL,
    sentence  INTEGER NOT NULL,
    text      VARCHAR NOT NULL,
    citations INTEGER[] NOT NULL
);

CREATE SEQUENCE nuggets_id_seq START 1;
CREATE TABLE nugget_set_meta (
    nuggets_id   INTEGER PRIMARY KEY DEFAULT nextval('nuggets_id_seq'),
    name         VARCHAR NOT NULL UNIQUE,
    source       VARCHAR NOT NULL,
    format       VARCHAR NOT NULL,
    sha256       VARCHAR NOT NULL,   -- of the content (the decompressed lines)
    file_sha256  VARCHAR NOT NULL,
    n_topics     INTEGER NOT NULL,
    n_nuggets    BIGINT NOT NULL,
    n_vital      BIGINT NOT NULL,
    ingested_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- one row per topic of a nugget set: its query as the file gives it
CREATE TABLE nugget_topic_data (
    nuggets_id INTEGER NOT NULL,
    topic      VARCHAR NOT NULL,
    query      VARCHAR,
    line_no    BIGINT NOT NULL
);

-- nugget: 0-based position in the topic's list; importance: 'vital' or 'okay'
CREATE TABLE nugget_data (
    nuggets_id INTEGER NOT NULL,
    topic      VARCHAR NOT NULL,
    nugget     INTEGER NOT NULL,
    text       VARCHAR NOT NULL,
    importance VARCHAR NOT NULL
);

-- The answers an assignment set judges: one row per (run, topic) line of its files, even one
-- that assigns no nugget (a topic without nuggets scores 0, as in nuggetizer).
CREATE TABLE assigned_answer_data (
    qrels_id   INTEGER NOT NULL,
    run        VARCHAR NOT NULL,
    topic      VARCHAR NOT NULL,
    line_no    BIGINT NOT NULL
);

-- An assignment set's labels: the nugget (by its position in the set's nugget set, matched by
-- topic and text at ingest) assigned to a run's answer for a topic.
CREATE TABLE assignment_data (
    qrels_id   INTEGER NOT NULL,
    run        VARCHAR NOT NULL,
    topic      VARCHAR NOT NULL,
    nugget     INTEGER NOT NULL,
    assignment VARCHAR NOT NULL,    -- support, partial_support, not_support
    grade      INTEGER NOT NULL,    -- 2, 1, 0
    line_no    BIGINT NOT NULL
);

-- A support set's labels: sentence and citation index into a run's answer for a topic (doc: the
-- reference cited, as the answer gives it when the labels were ingested).
CREATE TABLE support_data (
    qrels_id  INTEGER NOT NULL,
    run       VARCHAR NOT NULL,
    topic     VARCHAR NOT NULL,
    sentence  INTEGER NOT NULL,
    citation  INTEGER NOT NULL,
    doc       VARCHAR NOT NULL,
    label     VARCHAR NOT NULL,     -- full, partial, none
    grade     INTEGER NOT NULL,     -- 2, 1, 0
    line_no   BIGINT NOT NULL
);

-- runs: every column of migration 19, then unit ('ranking' or 'answers')
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
           r.kind,
           r.unit
    FROM run_meta r
    LEFT JOIN fusion_meta f ON f.run_id = r.run_id AND f.sha256 = r.sha256;

-- qrels_sets: every column of migration 10, then kind ('judgments', 'nuggets': nugget
-- assignments, 'support': citation support labels) and nuggets (an assignment set's nugget set)
DROP VIEW IF EXISTS qrels_sets;
CREATE VIEW qrels_sets AS
    SELECT m.name, m.source, m.sha256, m.n_topics, m.n_judged, m.ingested_at, m.format, m.max_grade,
           m.default_gains, m.file_sha256,
           EXISTS (SELECT 1 FROM subsample_meta s WHERE s.qrels_id = m.qrels_id) AS subsample,
           m.kind, n.name AS nuggets
    FROM qrels_meta m LEFT JOIN nugget_set_meta n USING (nuggets_id);

CREATE VIEW answers AS
    SELECT r.name AS run, a.topic, a.query, a.response_length, a.length_given, a.n_sentences,
           a.n_references, a.line_no
    FROM answer_data a JOIN run_meta r USING (run_id);

-- cited_docs: the documents the citations name, in the order of citations
CREATE VIEW answer_sentences AS
    -- (generate_subscripts, not WITH ORDINALITY: DuckDB 1.1 to 1.3 read the view of a store too)
    WITH c AS (
        SELECT run_id, topic, sentence, unnest(citations) AS citation, generate_subscripts(citations, 1) AS i
        FROM answer_sentence_data
    ), cited AS (
        SELECT c.run_id, c.topic, c.sentence, list(d.doc ORDER BY c.i) AS docs
        FROM c JOIN run_row_data d ON d.run_id = c.run_id AND d.topic = c.topic AND d.rank = c.citation + 1
        GROUP BY ALL
    )
    SELECT r.name AS run, s.topic, s.sentence, s.text, s.citations,
           coalesce(c.docs, []::VARCHAR[]) AS cited_docs
    FROM answer_sentence_data s
    JOIN run_meta r USING (run_id)
    LEFT JOIN cited c ON c.run_id = s.run_id AND c.topic = s.topic AND c.sentence = s.sentence;

CREATE VIEW nugget_sets AS
    SELECT name, source, format, sha256, file_sha256, n_topics, n_nuggets, n_vital, ingested_at
    FROM nugget_set_meta;

CREATE VIEW nuggets AS
    SELECT m.name AS nuggets, d.topic, d.nugget, d.text, d.importance, t.query
    FROM nugget_data d
    JOIN nugget_set_meta m USING (nuggets_id)
    LEFT JOIN nugget_topic_data t ON t.nuggets_id = d.nuggets_id AND t.topic = d.topic;

CREATE VIEW nugget_assignments AS
    SELECT q.name AS qrels, n.name AS nuggets, a.run, a.topic, a.nugget, d.text, d.importance,
           a.assignment, a.grade
    FROM assignment_data a
    JOIN qrels_meta q USING (qrels_id)
    JOIN nugget_set_meta n ON n.nuggets_id = q.nuggets_id
    JOIN nugget_data d ON d.nuggets_id = q.nuggets_id AND d.topic = a.topic AND d.nugget = a.nugget;

CREATE VIEW support_labels AS
    SELECT q.name AS qrels, s.run, s.topic, s.sentence, s.citation, s.doc, s.label, s.grade
    FROM support_data s JOIN qrels_meta q USING (qrels_id);

-- evalstore schema, migration 14: the texts of topics (queries) and documents.
--
-- A topic set is the content of a topic file (TREC <top>/<topic> files, qid<TAB>text, JSONL), a
-- doc set that of a document file (docid<TAB>text, JSONL); each is named (like a qrels set) and
-- identified by its content (sha256 of the decompressed bytes, with the format and, for topics,
-- the field taken as the query). Pages show a topic's query and a snippet of each document; SQL
-- reads the views topics, docs, topic_sets and doc_sets. Dropping a set removes its rows (drop.py
-- finds every table with a topics_id or docs_id column).
CREATE SEQUENCE topics_id_seq START 1;
CREATE TABLE topic_set_meta (
    topics_id    INTEGER PRIMARY KEY DEFAULT nextval('topics_id_seq'),
    name         VARCHAR NOT NULL UNIQUE,
    source       VARCHAR NOT NULL,
    format       VARCHAR NOT NULL,
    field        VARCHAR NOT NULL,  -- title, description or narrative: the query text
    sha256       VARCHAR NOT NULL,
    file_sha256  VARCHAR NOT NULL,
    n_topics     INTEGER NOT NULL,
    ingested_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- query: the chosen field; title, description, narrative: each field the file gives (else NULL)
CREATE TABLE topic_data (
    topics_id    INTEGER NOT NULL,
    topic        VARCHAR NOT NULL,
    query        VARCHAR NOT NULL,
    title        VARCHAR,
    description  VARCHAR,
    narrative    VARCHAR,
    line_no      BIGINT NOT NULL
);

CREATE SEQUENCE docs_id_seq START 1;
CREATE TABLE doc_set_meta (
    docs_id      INTEGER PRIMARY KEY DEFAULT nextval('docs_id_seq'),
    name         VARCHAR NOT NULL UNIQUE,
    source       VARCHAR NOT NULL,
    format       VARCHAR NOT NULL,
    sha256       VARCHAR NOT NULL,
    file_sha256  VARCHAR NOT NULL,
    n_docs       BIGINT NOT NULL,
    ingested_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- text: as given in the file (only the line end removed); title: a JSONL title field, else NULL
CREATE TABLE doc_data (
    docs_id      INTEGER NOT NULL,
    doc          VARCHAR NOT NULL,
    title        VARCHAR,
    text         VARCHAR NOT NULL,
    line_no      BIGINT NOT NULL
);

CREATE VIEW topic_sets AS
    SELECT name, source, format, field, sha256, file_sha256, n_topics, ingested_at FROM topic_set_meta;

CREATE VIEW doc_sets AS
    SELECT name, source, format, sha256, file_sha256, n_docs, ingested_at FROM doc_set_meta;

CREATE VIEW topics AS
    SELECT m.name AS topics, d.topic, d.query, d.title, d.description, d.narrative, d.line_no
    FROM topic_data d JOIN topic_set_meta m USING (topics_id);

CREATE VIEW docs AS
    SELECT m.name AS docs, d.doc, d.title, d.text, d.line_no
    FROM doc_data d JOIN doc_set_meta m USING (docs_id);

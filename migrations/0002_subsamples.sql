-- evalstore schema, migration 2: judgment subsamples (Buckley-Voorhees reduced qrels).
--
-- A subsample is an ordinary qrels set (a row of qrels_meta with its judgments in qrels_data, so
-- every metric, eval, scores and export work on it) plus this row recording how it was derived.

CREATE TABLE subsample_meta (
    qrels_id    INTEGER PRIMARY KEY,     -- the subsample's own qrels set
    parent_id   INTEGER NOT NULL,        -- the qrels set it was drawn from
    method      VARCHAR NOT NULL,        -- e.g. 'buckley_voorhees'
    fraction    DOUBLE  NOT NULL,        -- share of the judged documents kept, 0 < f <= 1
    seed        BIGINT  NOT NULL,
    trial       INTEGER NOT NULL,        -- 0-based trial number (one shuffle per trial and topic)
    min_rel     INTEGER NOT NULL,
    min_nonrel  INTEGER NOT NULL,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE VIEW subsamples AS
    SELECT q.name, p.name AS parent, s.method, s.fraction, s.seed, s.trial, s.min_rel, s.min_nonrel,
           q.n_topics, q.n_judged,
           (SELECT count(*) FROM qrels_data d WHERE d.qrels_id = s.qrels_id AND d.grade >= 1) AS n_rel,
           (SELECT count(*) FROM qrels_data d WHERE d.qrels_id = s.qrels_id AND d.grade = 0) AS n_nonrel,
           s.created_at
    FROM subsample_meta s
    JOIN qrels_meta q ON q.qrels_id = s.qrels_id
    JOIN qrels_meta p ON p.qrels_id = s.parent_id;

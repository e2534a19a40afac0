-- evalstore schema, migration 10: identity by content, and subsample scores told apart.
--
-- sha256 is the hash of a run's or qrels set's content (the decompressed bytes of its files; for a
-- qrels set with intent probabilities, of them too), so the same content read from a .gz file, the
-- decompressed file or a pipe is the same content. file_sha256 keeps the hash of the files as
-- given (provenance; what sha256sum prints). Rows stored before this migration held the hash of
-- the files as given in sha256: it is copied to file_sha256, and either hash identifies them.
ALTER TABLE run_meta ADD COLUMN file_sha256 VARCHAR;
ALTER TABLE qrels_meta ADD COLUMN file_sha256 VARCHAR;
UPDATE run_meta SET file_sha256 = sha256;
UPDATE qrels_meta SET file_sha256 = sha256;

DROP VIEW IF EXISTS runs;
CREATE VIEW runs AS
    SELECT name, tag, source, sha256, n_topics, n_rows, ingested_at, format, n_dropped_duplicates, file_sha256
    FROM run_meta;

DROP VIEW IF EXISTS qrels_sets;
CREATE VIEW qrels_sets AS
    SELECT name, source, sha256, n_topics, n_judged, ingested_at, format, max_grade, default_gains, file_sha256,
           EXISTS (SELECT 1 FROM subsample_meta s WHERE s.qrels_id = qrels_meta.qrels_id) AS subsample
    FROM qrels_meta;

-- subsample: the qrels set is a subsample of another (see the subsamples view), so a query over
-- the scores of the judged set filters them out with WHERE NOT subsample
DROP VIEW IF EXISTS scores;
CREATE VIEW scores AS
    SELECT r.name AS run, q.name AS qrels, s.metric, s.topic, s.value, e.engine_version, e.params,
           sm.qrels_id IS NOT NULL AS subsample
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric)
    LEFT JOIN subsample_meta sm ON sm.qrels_id = s.qrels_id;

DROP VIEW IF EXISTS leaderboard;
CREATE VIEW leaderboard AS
    SELECT r.name AS run, q.name AS qrels, s.metric,
           CASE any_value(e.aggregate)
               WHEN 'gmean' THEN exp(avg(ln(greatest(s.value, 1e-5)) ORDER BY s.topic))
               WHEN 'sum' THEN sum(s.value ORDER BY s.topic)
               ELSE avg(s.value ORDER BY s.topic) END AS mean,
           count(s.value) AS n_topics,
           any_value(e.aggregate) AS aggregate,
           any_value(e.params) AS params,
           any_value(sm.qrels_id) IS NOT NULL AS subsample
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric)
    LEFT JOIN subsample_meta sm ON sm.qrels_id = s.qrels_id
    GROUP BY r.name, q.name, s.metric;

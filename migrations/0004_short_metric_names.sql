-- evalstore schema, migration 4: scores are stored under the short canonical metric name.
--
-- Up to version 3 a score's metric was its long canonical name, every parameter spelled out
-- (nDCG(gains=grade,judged_only=false)@10), so `WHERE metric = 'nDCG@10'` found nothing. From
-- version 4 the name keeps only the parameters (and evaluation options) that differ from their
-- defaults (nDCG@10, AP(rel=2), AP(complete=true)), and evaluations.params holds every parameter
-- resolved, as JSON ({"metric": "nDCG", "cutoff": 10, "gains": "grade", "judged_only": false,
-- "convention": "trec_eval", "complete": false, "depth": null}); the scores and leaderboard views
-- show it. The SQL function metric_name('ndcg_cut_10') gives the stored name of any spelling.
--
-- The names are converted by evalstore's own name parser (the Python functions
-- evalstore_short_name and evalstore_resolved_params, registered before migrating), with each
-- qrels set's declared default gains. The meta-evaluation tables' canonical metric columns are
-- converted the same way.

DROP VIEW leaderboard;
DROP VIEW scores;

CREATE TABLE evaluations_v4 (
    run_id         INTEGER NOT NULL,
    qrels_id       INTEGER NOT NULL,
    metric         VARCHAR NOT NULL,  -- short canonical name: non-default parameters and options only
    aggregate      VARCHAR NOT NULL,  -- 'mean', 'gmean' (floor 1e-5, as trec_eval) or 'sum'
    n_topics       INTEGER NOT NULL,
    engine_version VARCHAR NOT NULL,
    computed_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    params         JSON,              -- every parameter resolved, the cutoff and the evaluation options
    PRIMARY KEY (run_id, qrels_id, metric)
);
INSERT INTO evaluations_v4
SELECT e.run_id, e.qrels_id, evalstore_short_name(e.metric, q.default_gains), e.aggregate, e.n_topics,
       e.engine_version, e.computed_at, evalstore_resolved_params(e.metric, q.default_gains)::JSON
FROM evaluations e JOIN qrels_meta q USING (qrels_id);
DROP TABLE evaluations;
ALTER TABLE evaluations_v4 RENAME TO evaluations;

UPDATE score_data SET metric = evalstore_short_name(s.metric, q.default_gains)
FROM score_data s JOIN qrels_meta q USING (qrels_id)
WHERE score_data.rowid = s.rowid;

UPDATE meta_correlations SET metric_a = evalstore_short_name(metric_a, (SELECT default_gains FROM qrels_meta WHERE name = qrels_a)),
                             metric_b = evalstore_short_name(metric_b, (SELECT default_gains FROM qrels_meta WHERE name = qrels_b));
UPDATE meta_swap SET metric = evalstore_short_name(metric, (SELECT default_gains FROM qrels_meta q WHERE q.name = meta_swap.qrels));
UPDATE meta_swap_bins SET metric = evalstore_short_name(metric, (SELECT default_gains FROM qrels_meta q WHERE q.name = meta_swap_bins.qrels));
UPDATE meta_pair_tests SET metric = evalstore_short_name(metric, (SELECT default_gains FROM qrels_meta q WHERE q.name = meta_pair_tests.qrels));
UPDATE meta_discpower SET metric = evalstore_short_name(metric, (SELECT default_gains FROM qrels_meta q WHERE q.name = meta_discpower.qrels));

CREATE VIEW scores AS
    SELECT r.name AS run, q.name AS qrels, s.metric, s.topic, s.value, e.engine_version, e.params
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
           any_value(e.aggregate) AS aggregate,
           any_value(e.params) AS params
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric)
    GROUP BY r.name, q.name, s.metric;

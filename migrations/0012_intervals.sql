-- evalstore schema, migration 12: confidence intervals of the mean of stored evaluations (issue 24).
--
-- One row per interval computed for a stored evaluation (run, qrels set, metric): the t interval
-- (method 't': mean -+ t_{(1+level)/2, n-1} sd / sqrt(n) over the run's n per-topic scores) or the
-- bootstrap percentile interval (method 'bootstrap': the (1-level)/2 and (1+level)/2 quantiles of the
-- mean over `trials` resamples of the topics drawn with `seed`); for a geometric-mean metric (GM_AP)
-- both on the log scale (scale 'log': exp of the interval of mean ln max(v, 1e-5)); none for sums.
-- trials and seed are 0 for the t interval. evaluated_at is the computed_at of the evaluation the
-- interval was computed from: an evaluation computed again (other content, another engine version)
-- leaves its old intervals out of the views (see evalstore/intervals/means.py).
CREATE TABLE interval_data (
    run_id       INTEGER NOT NULL,
    qrels_id     INTEGER NOT NULL,
    metric       VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,            -- 't' or 'bootstrap'
    level        DOUBLE NOT NULL,             -- confidence level, e.g. 0.95
    trials       INTEGER NOT NULL,            -- bootstrap resamples B (0 for t)
    seed         INTEGER NOT NULL,            -- bootstrap seed (0 for t)
    scale        VARCHAR NOT NULL,            -- 'mean', or 'log' for a geometric mean
    lo           DOUBLE,                      -- NULL when undefined (fewer than 2 topics)
    hi           DOUBLE,
    n_topics     INTEGER NOT NULL,
    evaluated_at TIMESTAMP NOT NULL,          -- evaluations.computed_at of the scores used
    computed_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, qrels_id, metric, method, level, trials, seed)
);

-- The intervals of the current evaluations, by name.
CREATE VIEW intervals AS
    SELECT r.name AS run, q.name AS qrels, i.metric, i.method, i.level,
           CASE WHEN i.method = 'bootstrap' THEN i.trials END AS trials,
           CASE WHEN i.method = 'bootstrap' THEN i.seed END AS seed,
           i.scale, i.lo, i.hi, i.n_topics, i.computed_at,
           sm.qrels_id IS NOT NULL AS subsample
    FROM interval_data i
    JOIN evaluations e ON e.run_id = i.run_id AND e.qrels_id = i.qrels_id AND e.metric = i.metric
                      AND e.computed_at = i.evaluated_at
    JOIN run_meta r ON r.run_id = i.run_id
    JOIN qrels_meta q ON q.qrels_id = i.qrels_id
    LEFT JOIN subsample_meta sm ON sm.qrels_id = i.qrels_id;

-- The leaderboard of migration 10 (every column, in the same order), with the most recently computed
-- current interval of each evaluation: ci_lo, ci_hi, ci_method, ci_level (NULL where none was stored).
DROP VIEW IF EXISTS leaderboard;
CREATE VIEW leaderboard AS
    WITH board AS (
        SELECT s.run_id, s.qrels_id, r.name AS run, q.name AS qrels, s.metric,
               CASE any_value(e.aggregate)
                   WHEN 'gmean' THEN exp(avg(ln(greatest(s.value, 1e-5)) ORDER BY s.topic))
                   WHEN 'sum' THEN sum(s.value ORDER BY s.topic)
                   ELSE avg(s.value ORDER BY s.topic) END AS mean,
               count(s.value) AS n_topics,
               any_value(e.aggregate) AS aggregate,
               any_value(e.params) AS params,
               any_value(sm.qrels_id) IS NOT NULL AS subsample,
               any_value(e.computed_at) AS evaluated_at
        FROM score_data s
        JOIN run_meta r USING (run_id)
        JOIN qrels_meta q USING (qrels_id)
        JOIN evaluations e USING (run_id, qrels_id, metric)
        LEFT JOIN subsample_meta sm ON sm.qrels_id = s.qrels_id
        GROUP BY s.run_id, s.qrels_id, r.name, q.name, s.metric
    ), ci AS (
        SELECT run_id, qrels_id, metric, lo, hi, method, level, evaluated_at
        FROM interval_data
        QUALIFY row_number() OVER (PARTITION BY run_id, qrels_id, metric, evaluated_at
                                   ORDER BY computed_at DESC, method, level, trials, seed) = 1
    )
    SELECT b.run, b.qrels, b.metric, b.mean, b.n_topics, b.aggregate, b.params, b.subsample,
           ci.lo AS ci_lo, ci.hi AS ci_hi, ci.method AS ci_method, ci.level AS ci_level
    FROM board b
    LEFT JOIN ci ON ci.run_id = b.run_id AND ci.qrels_id = b.qrels_id AND ci.metric = b.metric
                AND ci.evaluated_at = b.evaluated_at;

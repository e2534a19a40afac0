-- evalstore schema, migration 13: the leaderboard's means by the one rule of evalstore/base/aggregate.py.
--
-- A mean read from the leaderboard view is now the same double as the mean `evalstore eval`,
-- Store.evaluate and the exports print for the same per-topic scores: the sum is correctly rounded
-- (exact fixed-point sums on HUGEINT, aggregate.exact_sum_sql, as Python's math.fsum), so it no
-- longer depends on the order of the topics or on the rounding of avg(). Before, avg() ... ORDER BY
-- topic could differ in the last bit (AP and nDCG@10 on the sample). The geometric mean no longer
-- counts a missing per-topic value as the 1e-5 floor (greatest() skipped NULL). Every column and
-- the intervals of migration 12 stay as they were.
--
-- The three expressions are aggregate.sql('mean' | 'gmean' | 'sum', 's.value');
-- tests/evalstore/base/test_aggregate.py checks that this file holds them and that the view's means equal
-- EvalResult's bit for bit.
DROP VIEW IF EXISTS leaderboard;
CREATE VIEW leaderboard AS
    WITH board AS (
        SELECT s.run_id, s.qrels_id, r.name AS run, q.name AS qrels, s.metric,
               CASE any_value(e.aggregate)
                   WHEN 'gmean' THEN
                       exp((CAST((sum(CAST(floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0) - floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -60) + CAST((((sum(CAST(floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0) - floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) - CAST(CAST((sum(CAST(floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0) - floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) AS HUGEINT)) * 1152921504606846976 + sum(CAST(floor(((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0) - floor((CAST(ln(CASE WHEN s.value < 1e-05 THEN 1e-05 ELSE s.value END) AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) % 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -120)) / count(s.value))
                   WHEN 'sum' THEN
                       (CAST((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -60) + CAST((((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) - CAST(CAST((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) AS HUGEINT)) * 1152921504606846976 + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) % 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -120))
                   ELSE
                       (CAST((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -60) + CAST((((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) - CAST(CAST((sum(CAST(floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0)) AS HUGEINT)) + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) // 1152921504606846976) AS DOUBLE) AS HUGEINT)) * 1152921504606846976 + sum(CAST(floor(((CAST(s.value AS DOUBLE) * 1152921504606846976.0) - floor((CAST(s.value AS DOUBLE) * 1152921504606846976.0))) * 1152921504606846976.0) AS HUGEINT)) % 1152921504606846976) AS DOUBLE) * (CAST(2 AS DOUBLE) ** -120)) / count(s.value)
               END AS mean,
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

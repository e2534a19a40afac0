-- The leaderboard view sums each (run, qrels set, metric) in topic order (ordered aggregates), so a
-- mean no longer depends on the order DuckDB reads score_data in: the same scores give the same
-- mean to the last bit, e.g. in a store imported from its Parquet layout (evalstore import store).
DROP VIEW IF EXISTS leaderboard;
CREATE VIEW leaderboard AS
    SELECT r.name AS run, q.name AS qrels, s.metric,
           CASE any_value(e.aggregate)
               WHEN 'gmean' THEN exp(avg(ln(greatest(s.value, 1e-5)) ORDER BY s.topic))
               WHEN 'sum' THEN sum(s.value ORDER BY s.topic)
               ELSE avg(s.value ORDER BY s.topic) END AS mean,
           count(s.value) AS n_topics,
           any_value(e.aggregate) AS aggregate,
           any_value(e.params) AS params
    FROM score_data s
    JOIN run_meta r USING (run_id)
    JOIN qrels_meta q USING (qrels_id)
    JOIN evaluations e USING (run_id, qrels_id, metric)
    GROUP BY r.name, q.name, s.metric;

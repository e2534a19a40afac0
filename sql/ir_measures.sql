-- Measures defined by ir_measures 0.4.3's own providers (judged, compat, accuracy) and its NumQ
-- (pytrec_eval's num_q), restated from ir_measures' source (ir_measures/providers/*.py).
--
--   Judged@k   = (docs in the top k that appear in the qrels, any grade, -1 included) / min(k, retrieved)
--   NumQ       = 1 per evaluated topic (summed over topics)
--   Accuracy@k = 1 - sum_{relevant d in the top k} nonrel_above(d) / (NR * #relevant), NR = docs in
--                the top k that are not relevant (unjudged included); no value when no relevant doc
--                is in the top k or every doc is relevant (ir_measures raises ZeroDivisionError)
--   Compat(p)  = RBO_p(run, ideal) to depth D = max(|run|, |ideal|), where
--                RBO_p(a, b) = sum_{d<=D} p^(d-1) |a_{<=d} & b_{<=d}|/d / sum_{d<=D} p^(d-1);
--                ideal = the docs with grade > 0 by grade desc, then run score desc (unretrieved
--                docs count as score 0), then docno; normalize: divided by RBO_p(ideal, ideal)
--                (Clarke, Vtyurina & Smucker, TOIS 2021)

-- @metric Judged
-- reads: rl_judged
-- params: k
SELECT qrels_id, run_id, topic, count(*) / least(${k}, any_value(num_ret)) AS value
FROM rl_judged WHERE rank <= ${k} AND num_ret > 0
GROUP BY qrels_id, run_id, topic

-- @metric NumQ
-- reads: rl_topics
SELECT qrels_id, run_id, topic, 1.0 AS value FROM rl_topics

-- @metric Accuracy
-- reads: rl_judged
-- needs: cnt
-- params: k
SELECT qrels_id, run_id, topic,
       1 - exact_sum(rank - cnt) / ((least(${k}, any_value(num_ret)) - count(*)) * count(*)) AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic
HAVING least(${k}, any_value(num_ret)) - count(*) > 0

-- @metric Compat
-- reads: rl_qrels, rl_topics, rl_retrieved
-- params: normalize, p
WITH ideal AS (
    SELECT t.qrels_id, t.run_id, t.topic, q.doc, x.rank AS rr,
           row_number() OVER (PARTITION BY t.qrels_id, t.run_id, t.topic
                              ORDER BY q.grade DESC, coalesce(x.score, 0.0) DESC, q.doc) AS ir
    FROM rl_qrels q
    JOIN rl_topics t ON t.qrels_id = q.qrels_id AND t.topic = q.topic
    LEFT JOIN rl_retrieved x ON x.run_id = t.run_id AND x.topic = t.topic AND x.doc = q.doc
    WHERE q.grade > 0
), sizes AS (
    SELECT t.qrels_id, t.run_id, t.topic, coalesce(n.n_ideal, 0) AS n_ideal,
           greatest(t.num_ret, coalesce(n.n_ideal, 0)) AS depth_d
    FROM rl_topics t
    LEFT JOIN (SELECT qrels_id, run_id, topic, count(*) AS n_ideal FROM ideal GROUP BY qrels_id, run_id, topic) n
      ON n.qrels_id = t.qrels_id AND n.run_id = t.run_id AND n.topic = t.topic
), meet AS (
    SELECT qrels_id, run_id, topic, greatest(ir, rr) AS d, count(*) AS n
    FROM ideal WHERE rr IS NOT NULL GROUP BY qrels_id, run_id, topic, greatest(ir, rr)
), grid AS (
    SELECT qrels_id, run_id, topic, n_ideal, unnest(generate_series(1, depth_d)) AS d FROM sizes WHERE depth_d > 0
), overlap AS (
    SELECT g.qrels_id, g.run_id, g.topic, g.d, least(g.d, g.n_ideal) AS best,
           sum(coalesce(m.n, 0)) OVER (PARTITION BY g.qrels_id, g.run_id, g.topic ORDER BY g.d ROWS UNBOUNDED PRECEDING) AS o
    FROM grid g
    LEFT JOIN meet m ON m.qrels_id = g.qrels_id AND m.run_id = g.run_id AND m.topic = g.topic AND m.d = g.d
), rbo AS (
    SELECT qrels_id, run_id, topic,
           exact_sum(pow(${p}, d - 1) * o / d) / exact_sum(pow(${p}, d - 1)) AS score,
           exact_sum(pow(${p}, d - 1) * best / d) / exact_sum(pow(${p}, d - 1)) AS best
    FROM overlap GROUP BY qrels_id, run_id, topic
)
SELECT qrels_id, run_id, topic, CASE WHEN ${normalize} AND best > 0 THEN score / best ELSE score END AS value
FROM rbo

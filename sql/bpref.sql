-- The bpref / rpref family: preference measures on the condensed list (Sakai, SIGIR 2007,
-- "Alternatives to Bpref", paper 002 Sec. 4; ../shared/reference/metric_definitions.md Secs. 4.2-4.3).
--
-- These measures read judged documents only. Every block condenses the list itself: it keeps the
-- retrieved rows with judged = true (grade >= 0; unjudged docs have no row, pooled-but-unjudged
-- rows with grade < 0 are skipped) in evaluation order and renumbers them r' = 1, 2, ... So the
-- value is the same with or without judged_only, and a depth (-M / -truncate) keeps the judged
-- docs among the original top k (NTCIREVAL's `label -truncate k -j`).
--
-- Notation (condensed list): isrel(r') = grade >= rel; count(r') = relevant docs at ranks <= r'
-- (= cnt: grade < 0 rows are never relevant); np(r') = r' - count(r') = judged nonrelevant docs
-- above a relevant doc; R = relevant docs in the qrels, N = judged nonrelevant docs in the qrels
-- (0 <= grade < rel), N_ret = judged nonrelevant docs retrieved; g(r') = gain; gain(H) = ${gmax},
-- the top declared gain (or the highest grade of the qrels set and its parent);
-- cg_I(R) = ideal_total, the sum of the gains of all judged docs.
--
--   bpref_R         = (1/R) sum_{r'} isrel(r') (1 - min(R, np(r'))/R)               002 Eq. 10
--   bpref_N         = (1/R) sum_{r'} isrel(r') (1 - np(r')/N)                       002 Eq. 11
--                     (trec_eval 8.1 bpref_allnonrel)
--   bpref_relative  = (1/R) sum_{r' != 1} isrel(r') (1 - np(r')/(r' - 1))          002 Eq. 18
--   bpref_relative2 = (1/R) sum_{r'} isrel(r') count(r')/r'        (= AP')         002 Eq. 20
--   old_bpref       = (1/R) sum_{r'} isrel(r') (1 - min(R, np(r'))/min(R, N_ret))   002 Sec. 4.1
--                     (trec_eval 8.1's "buggy" bpref: N_ret instead of N)
--   penalty(r')     = sum_{i' < r', g(i') < g(r')} (g(r') - g(i'))/g(r')             002 Eq. 15
--   rpref_N         = (1/cg_I(R)) sum_{g(r')>0} g(r') (1 - penalty(r')/(R + N - cg_I(R)/gain(H)))   Eq. 16
--   rpref_relative  = (1/cg_I(R)) sum_{r' != 1, g(r')>0} g(r') (1 - penalty(r')/(r' - 1))          Eq. 17
--   rpref_relative2 = (1/cg_I(R)) sum_{g(r')>0} g(r') (1 - penalty(r')/r')                         Eq. 19
--
-- A relevant doc with no penalty scores 1 whatever the normaliser (trec_eval's convention for
-- bpref, so N = 0 or N_ret = 0 give 1 per retrieved relevant doc; NTCIREVAL -j refuses topics with
-- N = 0). Relevant docs not retrieved add 0. Topics with R = 0 (cg_I(R) = 0 for rpref) score 0.
--
-- penalty(r') without a self-join: for each gain value v of a retrieved relevant doc, a running
-- count and gain sum of the judged docs with gain < v; then
-- penalty(r') = (n_below(r') * g(r') - g_below(r')) / g(r') at the rows where v = g(r').

-- @metric bpref_R
WITH c AS (
    SELECT qrels_id, run_id, topic, isrel, cnt, R,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND R > 0
)
SELECT qrels_id, run_id, topic,
       sum(1.0 - least(R, rp - cnt)::DOUBLE / R) FILTER (WHERE isrel = 1) / any_value(R) AS value
FROM c GROUP BY qrels_id, run_id, topic

-- @metric bpref_N
WITH c AS (
    SELECT qrels_id, run_id, topic, isrel, cnt, R, N,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND R > 0
)
SELECT qrels_id, run_id, topic,
       sum(CASE WHEN rp - cnt = 0 THEN 1.0 ELSE 1.0 - (rp - cnt)::DOUBLE / N END)
           FILTER (WHERE isrel = 1) / any_value(R) AS value
FROM c GROUP BY qrels_id, run_id, topic

-- @metric bpref_relative
WITH c AS (
    SELECT qrels_id, run_id, topic, isrel, cnt, R,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND R > 0
)
SELECT qrels_id, run_id, topic,
       coalesce(sum(1.0 - (rp - cnt)::DOUBLE / (rp - 1)) FILTER (WHERE isrel = 1 AND rp > 1), 0)
           / any_value(R) AS value
FROM c GROUP BY qrels_id, run_id, topic

-- @metric bpref_relative2
WITH c AS (
    SELECT qrels_id, run_id, topic, isrel, cnt, R,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND R > 0
)
SELECT qrels_id, run_id, topic, sum(cnt::DOUBLE / rp) FILTER (WHERE isrel = 1) / any_value(R) AS value
FROM c GROUP BY qrels_id, run_id, topic

-- @metric old_bpref
WITH c AS (
    SELECT qrels_id, run_id, topic, isrel, cnt, R,
           row_number() OVER w AS rp,
           count(*) FILTER (WHERE isrel = 0) OVER (PARTITION BY qrels_id, run_id, topic) AS n_ret
    FROM rl_judged WHERE judged AND R > 0
    WINDOW w AS (PARTITION BY qrels_id, run_id, topic ORDER BY rank)
)
SELECT qrels_id, run_id, topic,
       sum(CASE WHEN rp - cnt = 0 THEN 1.0 ELSE 1.0 - least(R, rp - cnt)::DOUBLE / least(R, n_ret) END)
           FILTER (WHERE isrel = 1) / any_value(R) AS value
FROM c GROUP BY qrels_id, run_id, topic

-- @metric rpref_N
WITH j AS (
    SELECT qrels_id, run_id, topic, gain, R, N, ideal_total,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND ideal_total > 0
), lv AS (
    SELECT DISTINCT qrels_id, run_id, topic, gain AS v FROM j WHERE gain > 0
), p AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.rp, j.gain, lv.v, j.R, j.N, j.ideal_total,
           sum(CASE WHEN j.gain < lv.v THEN 1 ELSE 0 END) OVER w AS n_below,
           sum(CASE WHEN j.gain < lv.v THEN j.gain ELSE 0 END) OVER w AS g_below
    FROM j JOIN lv USING (qrels_id, run_id, topic)
    WINDOW w AS (PARTITION BY j.qrels_id, j.run_id, j.topic, lv.v ORDER BY j.rp ROWS UNBOUNDED PRECEDING)
)
SELECT qrels_id, run_id, topic,
       sum(CASE WHEN n_below = 0 THEN gain
                ELSE gain * (1.0 - ((n_below * gain - g_below) / gain)
                                   / (R + N - ideal_total / ${gmax})) END) / any_value(ideal_total) AS value
FROM p WHERE gain = v
GROUP BY qrels_id, run_id, topic

-- @metric rpref_relative
WITH j AS (
    SELECT qrels_id, run_id, topic, gain, ideal_total,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND ideal_total > 0
), lv AS (
    SELECT DISTINCT qrels_id, run_id, topic, gain AS v FROM j WHERE gain > 0
), p AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.rp, j.gain, lv.v, j.ideal_total,
           sum(CASE WHEN j.gain < lv.v THEN 1 ELSE 0 END) OVER w AS n_below,
           sum(CASE WHEN j.gain < lv.v THEN j.gain ELSE 0 END) OVER w AS g_below
    FROM j JOIN lv USING (qrels_id, run_id, topic)
    WINDOW w AS (PARTITION BY j.qrels_id, j.run_id, j.topic, lv.v ORDER BY j.rp ROWS UNBOUNDED PRECEDING)
)
SELECT qrels_id, run_id, topic,
       coalesce(sum(gain * (1.0 - ((n_below * gain - g_below) / gain) / (rp - 1))) FILTER (WHERE rp > 1), 0)
           / any_value(ideal_total) AS value
FROM p WHERE gain = v
GROUP BY qrels_id, run_id, topic

-- @metric rpref_relative2
WITH j AS (
    SELECT qrels_id, run_id, topic, gain, ideal_total,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank) AS rp
    FROM rl_judged WHERE judged AND ideal_total > 0
), lv AS (
    SELECT DISTINCT qrels_id, run_id, topic, gain AS v FROM j WHERE gain > 0
), p AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.rp, j.gain, lv.v, j.ideal_total,
           sum(CASE WHEN j.gain < lv.v THEN 1 ELSE 0 END) OVER w AS n_below,
           sum(CASE WHEN j.gain < lv.v THEN j.gain ELSE 0 END) OVER w AS g_below
    FROM j JOIN lv USING (qrels_id, run_id, topic)
    WINDOW w AS (PARTITION BY j.qrels_id, j.run_id, j.topic, lv.v ORDER BY j.rp ROWS UNBOUNDED PRECEDING)
)
SELECT qrels_id, run_id, topic,
       sum(gain * (1.0 - ((n_below * gain - g_below) / gain) / rp)) / any_value(ideal_total) AS value
FROM p WHERE gain = v
GROUP BY qrels_id, run_id, topic

-- The bpref / rpref family: preference measures on the condensed list (Sakai, SIGIR 2007,
-- "Alternatives to Bpref", SIGIR 2007, Sec. 4).
--
-- These measures read judged documents only. Every block condenses the list itself: it keeps the
-- retrieved rows with judged = true (grade >= 0; unjudged docs have no row, pooled-but-unjudged
-- rows with grade < 0 are skipped) in evaluation order and renumbers them r' = 1, 2, ... So the
-- value is the same with or without judged_only, and a depth (-M / -truncate) keeps the judged
-- docs among the original top k (NTCIREVAL's `label -truncate k -j`).
--
-- Notation (condensed list): r' = jrank (judged docs at ranks <= r, see sql/ranked_list.sql);
-- isrel(r') = grade >= rel; count(r') = relevant docs at ranks <= r' (= cnt: grade < 0 rows are
-- never relevant); np(r') = r' - count(r') = judged nonrelevant docs
-- above a relevant doc; R = relevant docs in the qrels, N = judged nonrelevant docs in the qrels
-- (0 <= grade < rel), N_ret = judged nonrelevant docs retrieved; g(r') = gain; gain(H) = ${gmax},
-- the top declared gain (or the highest grade of the qrels set and its parent);
-- cg_I(R) = ideal_total, the sum of the gains of all judged docs.
--
--   bpref_R         = (1/R) sum_{r'} isrel(r') (1 - min(R, np(r'))/R)               Eq. 10
--   bpref_N         = (1/R) sum_{r'} isrel(r') (1 - np(r')/N)                       Eq. 11
--                     (trec_eval 8.1 bpref_allnonrel)
--   bpref_relative  = (1/R) sum_{r' != 1} isrel(r') (1 - np(r')/(r' - 1))          Eq. 18
--   bpref_relative2 = (1/R) sum_{r'} isrel(r') count(r')/r'        (= AP')         Eq. 20
--   old_bpref       = (1/R) sum_{r'} isrel(r') (1 - min(R, np(r'))/min(R, N_ret))   Sec. 4.1
--                     (trec_eval 8.1's "buggy" bpref: N_ret instead of N)
--   penalty(r')     = sum_{i' < r', g(i') < g(r')} (g(r') - g(i'))/g(r')             Eq. 15
--   rpref_N         = (1/cg_I(R)) sum_{g(r')>0} g(r') (1 - penalty(r')/(R + N - cg_I(R)/gain(H)))   Eq. 16
--   rpref_relative  = (1/cg_I(R)) sum_{r' != 1, g(r')>0} g(r') (1 - penalty(r')/(r' - 1))          Eq. 17
--   rpref_relative2 = (1/cg_I(R)) sum_{g(r')>0} g(r') (1 - penalty(r')/r')                         Eq. 19
--
-- A relevant doc with no penalty scores 1 whatever the normaliser (trec_eval's convention for
-- bpref, so N = 0 or N_ret = 0 give 1 per retrieved relevant doc; NTCIREVAL -j refuses topics with
-- N = 0). Relevant docs not retrieved add 0. Topics with R = 0 (cg_I(R) = 0 for rpref) score 0.
--
-- old_bpref without a window: sum over relevant docs of 1 - min(R, np)/min(R, N_ret) =
-- #relevant retrieved - (sum of min(R, np)) / min(R, N_ret), all aggregates of the topic.
-- penalty(r') without a self-join: the judged docs above with gain 0 each add 1; there are
-- z(r') = (r' - 1) - (docs with gain > 0 above) of them. For the docs with gain > 0, for each gain
-- value v of a retrieved one, a running count n_below and gain sum g_below of the docs with
-- 0 < gain < v (computed over the docs with 0 < gain <= v); at the rows where v = g(r'):
-- penalty(r') = z(r') + n_below(r') - g_below(r')/g(r').
--
-- Fragment rpref_penalty (shared by the three rpref blocks): x = one row per retrieved judged doc with gain > 0, with its penalty(r').
-- The blocks take exact sums (exact_sum, see evalstore/metrics/sqlfile.py), so that a value does not depend on the
-- order DuckDB happens to read rows in (the last bit of a floating-point sum does).

-- @fragment rpref_penalty
-- reads: rl_judged
-- needs: jrank
pos AS (
    SELECT qrels_id, run_id, topic, jrank, gain, R, N, ideal_total,
           row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY jrank) - 1 AS pos_above
    FROM rl_judged WHERE judged AND gain > 0 AND ideal_total > 0
), lv AS (
    SELECT DISTINCT qrels_id, run_id, topic, gain AS v FROM pos
), p AS (
    SELECT pos.*, lv.v,
           sum(CASE WHEN pos.gain < lv.v THEN 1 ELSE 0 END) OVER w AS n_below,
           sum(CASE WHEN pos.gain < lv.v THEN pos.gain ELSE 0 END) OVER w AS g_below
    FROM pos JOIN lv ON lv.qrels_id = pos.qrels_id AND lv.run_id = pos.run_id AND lv.topic = pos.topic
                    AND pos.gain <= lv.v
    WINDOW w AS (PARTITION BY pos.qrels_id, pos.run_id, pos.topic, lv.v ORDER BY pos.jrank ROWS UNBOUNDED PRECEDING)
), x AS (
    SELECT *, (jrank - 1 - pos_above) + n_below - g_below / gain AS penalty FROM p WHERE gain = v
)

-- @metric bpref_R
-- reads: rl_judged
-- needs: cnt, jrank
SELECT qrels_id, run_id, topic,
       exact_sum(CASE WHEN isrel = 1 THEN 1.0 - least(R, jrank - cnt)::DOUBLE / R END) / any_value(R) AS value
FROM rl_judged WHERE judged AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric bpref_N
-- reads: rl_judged
-- needs: cnt, jrank
SELECT qrels_id, run_id, topic,
       exact_sum(CASE WHEN isrel = 1 THEN CASE WHEN jrank = cnt THEN 1.0 ELSE 1.0 - (jrank - cnt)::DOUBLE / N END END) / any_value(R) AS value
FROM rl_judged WHERE judged AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric bpref_relative
-- reads: rl_judged
-- needs: cnt, jrank
SELECT qrels_id, run_id, topic,
       coalesce(exact_sum(CASE WHEN isrel = 1 AND jrank > 1 THEN 1.0 - (jrank - cnt)::DOUBLE / (jrank - 1) END), 0)
           / any_value(R) AS value
FROM rl_judged WHERE judged AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric bpref_relative2
-- reads: rl_judged
-- needs: cnt, jrank
SELECT qrels_id, run_id, topic, exact_sum(CASE WHEN isrel = 1 THEN cnt::DOUBLE / jrank END) / any_value(R) AS value
FROM rl_judged WHERE judged AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric old_bpref
-- reads: rl_judged
-- needs: cnt, jrank
SELECT qrels_id, run_id, topic,
       (count(*) FILTER (WHERE isrel = 1)
        - coalesce(exact_sum(CASE WHEN isrel = 1 AND jrank > cnt THEN least(R, jrank - cnt) END), 0)::DOUBLE
          / greatest(least(any_value(R), count(*) FILTER (WHERE isrel = 0)), 1)) / any_value(R) AS value
FROM rl_judged WHERE judged AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric rpref_N
-- params: gmax, rpref_penalty
WITH ${rpref_penalty}
SELECT qrels_id, run_id, topic, exact_sum(CASE WHEN penalty = 0 THEN gain
                ELSE gain * (1.0 - penalty / (R + N - ideal_total / ${gmax})) END) / any_value(ideal_total) AS value
FROM x GROUP BY qrels_id, run_id, topic

-- @metric rpref_relative
-- needs: jrank
-- params: rpref_penalty
WITH ${rpref_penalty}
SELECT qrels_id, run_id, topic, coalesce(exact_sum(CASE WHEN jrank > 1 THEN gain * (1.0 - penalty / (jrank - 1)) END), 0) / any_value(ideal_total) AS value
FROM x GROUP BY qrels_id, run_id, topic

-- @metric rpref_relative2
-- needs: jrank
-- params: rpref_penalty
WITH ${rpref_penalty}
SELECT qrels_id, run_id, topic, exact_sum(gain * (1.0 - penalty / jrank)) / any_value(ideal_total) AS value
FROM x GROUP BY qrels_id, run_id, topic

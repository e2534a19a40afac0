-- The C/W/L family as cwl_eval 1.0.12 computes it (Moffat et al.; Azzopardi, Thomas & Moffat,
-- "cwl_eval: An evaluation tool for information retrieval", SIGIR 2019), through ir_measures 0.4.3.
--
-- A C/W/L metric is defined by its continuation probabilities c_i (the chance that a user who
-- looked at rank i goes on to rank i+1). Over a ranking padded (gain 0) or truncated to N = 1000
-- ranks, as cwl_eval does:
--
--   P_i = prod_{m < i} c_m                  (P_1 = 1)
--   W_i = P_i / sum_{j <= N} P_j            expected rate of gain: EU = sum_{i <= N} W_i g_i
--
-- Gains are grades scaled to [0, 1]: g = (clip(grade, min_rel, max_rel) - min_rel)/(max_rel - min_rel)
-- (negative grades first clipped to 0; unjudged docs gain 0). RBP binarises at rel instead
-- (g = 1 when grade >= rel). T is the desired total gain, k the cutoff:
--
--   RBP(p, rel)    c_i = p                                         Moffat & Zobel, TOIS 2008
--                  (without rel: trectools' graded RBP, see the block; RBP_resid: its residual)
--   SDCG@k         c_i = log(i+1)/log(i+2) for i < k, else 0       scaled DCG: sum_{i<=k} g_i/log2(i+1) / sum_{i<=k} 1/log2(i+1)
--   BPM(T)@k       c_i = 1 while cg(i) < T and i < k, else 0       static Bejeweled player, Zhang et al., SIGIR 2017
--   INST(T)        c_i = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - cg(i)     Moffat et al., ADCS 2015
--   INSQ(T)        c_i = ((i + 2T - 1)/(i + 2T))^2                 Moffat et al., ADCS 2012
--   NERR8@k        c_i = 1 - g_i for i < k, else 0                 Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 8
--   NERR9@k        c_i = i/(i+1) (1 - g_i) for i < k, else 0       Eq. 9
--   NERR10(p)      c_i = p (1 - g_i)                               Eq. 10
--   NERR11(T)      c_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i)        Eq. 11
--
-- cg(i) = sum of gains at ranks <= i. P_i is computed as exp(sum of ln c_m) with the zeros
-- counted apart (c_m = 0 stops the user); the sums are exact (exact_sum), so a value does not depend
-- on how DuckDB splits the 1000 rows between threads. Ties in score keep the file order (cwl_eval sorts
-- stably), which the ir_measures convention applies; topics not retrieved score 0.
--
-- Fragment cwl_grid (all but RBP): every rank 1..1000 of every evaluated (qrels, run, topic) with its scaled gain g and gsum = the gain so far.
-- Fragment cwl_value (all but RBP): from c (the continuation at each rank of grid), EU = sum W_i g_i.

-- @fragment cwl_grid
-- reads: rl_topics, rl_judged
-- params: min_rel, max_rel
grid AS (
    SELECT t.qrels_id, t.run_id, t.topic, r.rank,
           coalesce((least(greatest(greatest(j.grade, 0), ${min_rel}), ${max_rel}) - ${min_rel})
                    / (${max_rel} - ${min_rel}), 0.0) AS g
    FROM rl_topics t
    CROSS JOIN (SELECT unnest(generate_series(1, 1000)) AS rank) r
    LEFT JOIN rl_judged j ON j.qrels_id = t.qrels_id AND j.run_id = t.run_id AND j.topic = t.topic
                         AND j.rank = r.rank AND j.grade >= 0
), gridc AS (
    SELECT *, sum(g) OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank ROWS UNBOUNDED PRECEDING) AS gsum
    FROM grid
)

-- @fragment cwl_value
wp AS (
    SELECT qrels_id, run_id, topic, rank, g,
           coalesce(sum(CASE WHEN c <= 0 THEN 1 ELSE 0 END) OVER prior, 0) AS stops,
           coalesce(sum(CASE WHEN c > 0 THEN ln(c) ELSE 0 END) OVER prior, 0) AS lnp
    FROM cont
    WINDOW prior AS (PARTITION BY qrels_id, run_id, topic ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT qrels_id, run_id, topic,
       exact_sum(g * CASE WHEN stops > 0 THEN 0 ELSE exp(lnp) END)
           / exact_sum(CASE WHEN stops > 0 THEN 0 ELSE exp(lnp) END) AS value
FROM wp
GROUP BY qrels_id, run_id, topic

-- @metric RBP
-- reads: rl_judged, rl_retrieved
-- params: k, p, rel
-- (rel given: cwl_eval's binary RBP above. rel not given: graded RBP as trectools computes it, the
-- only tool ir_measures 0.4.3 has for it: sum_{i<=k} (1-p) p^(i-1) grade_i with the raw grade, so
-- values above 1 occur, and the docs of a group of equal scores share the mean weight of the group.)
SELECT qrels_id, run_id, topic,
       (1 - ${p}) * exact_sum(pow(${p}, rank - 1)) / (1 - pow(${p}, 1000)) AS value
FROM rl_judged
WHERE ${rel} IS NOT NULL AND rank <= 1000 AND rank <= ${k} AND grade >= greatest(${rel}, 1)
GROUP BY qrels_id, run_id, topic
UNION ALL
SELECT j.qrels_id, j.run_id, j.topic,
       exact_sum(j.grade * (pow(${p}, g.a - 1) - pow(${p}, g.b)) / (g.b - g.a + 1)) AS value
FROM rl_judged j
JOIN rl_retrieved r ON r.run_id = j.run_id AND r.topic = j.topic AND r.doc = j.doc
JOIN (SELECT run_id, topic, score, min(rank) AS a, max(rank) AS b FROM rl_retrieved WHERE rank <= ${k}
      GROUP BY run_id, topic, score) g
  ON g.run_id = j.run_id AND g.topic = j.topic AND g.score IS NOT DISTINCT FROM r.score
WHERE ${rel} IS NULL AND j.rank <= ${k} AND j.grade > 0
GROUP BY j.qrels_id, j.run_id, j.topic

-- @metric RBP_resid
-- reads: rl_topics, rl_judged, rl_retrieved
-- params: has_cutoff, k, p
-- (RBP's residual, Moffat & Zobel, TOIS 2008, as trectools 0.0.50's TrecEval.get_rbp returns it:
-- the weight (1-p) p^(i-1) of the unjudged ranks i <= d plus p^d, the weight of every rank beyond
-- d, with d = k (RBP_resid@k) or 1000 (get_rbp's default depth). A rank's weight is the mean weight
-- of its group of equal scores among the top d (trectools' average_ties). The weight of the top
-- n = min(d, retrieved) ranks is 1 - p^n, so the residual is 1 - p^n - (the judged ranks' weight) +
-- p^d; ranks a run left empty add nothing. Unjudged: not in the qrels, or a negative grade.)
WITH cut AS (
    SELECT CASE WHEN ${has_cutoff} THEN ${k} ELSE 1000 END AS d
), ties AS (
    SELECT r.run_id, r.topic, r.score, CASE WHEN r.score IS NULL THEN r.rank END AS alone,
           min(r.rank) AS a, max(r.rank) AS b
    FROM rl_retrieved r CROSS JOIN cut
    WHERE r.rank <= cut.d
    GROUP BY r.run_id, r.topic, r.score, CASE WHEN r.score IS NULL THEN r.rank END
), seen AS (
    SELECT j.qrels_id, j.run_id, j.topic,
           exact_sum((pow(${p}, g.a - 1) - pow(${p}, g.b)) / (g.b - g.a + 1)) AS w
    FROM rl_judged j
    JOIN rl_retrieved r ON r.run_id = j.run_id AND r.topic = j.topic AND r.doc = j.doc
    JOIN ties g ON g.run_id = r.run_id AND g.topic = r.topic AND g.score IS NOT DISTINCT FROM r.score
               AND g.alone IS NOT DISTINCT FROM (CASE WHEN r.score IS NULL THEN r.rank END)
    WHERE j.judged
    GROUP BY j.qrels_id, j.run_id, j.topic
)
SELECT t.qrels_id, t.run_id, t.topic,
       1 - pow(${p}, least(t.num_ret, c.d)) - coalesce(s.w, 0) + pow(${p}, c.d) AS value
FROM rl_topics t
CROSS JOIN cut c
LEFT JOIN seen s ON s.qrels_id = t.qrels_id AND s.run_id = t.run_id AND s.topic = t.topic

-- @metric SDCG
-- params: cwl_grid, cwl_value, k
WITH ${cwl_grid}, cont AS (
    SELECT *, CASE WHEN rank < ${k} THEN ln(rank + 1) / ln(rank + 2) ELSE 0 END AS c FROM gridc
), ${cwl_value}

-- @metric BPM
-- params: cwl_grid, cwl_value, k, T
WITH ${cwl_grid}, cont AS (
    SELECT *, CASE WHEN gsum < ${T} AND rank < ${k} THEN 1.0 ELSE 0.0 END AS c FROM gridc
), ${cwl_value}

-- @metric INST
-- params: cwl_grid, cwl_value, T
WITH ${cwl_grid}, cont AS (
    SELECT *, pow((rank + ${T} + (${T} - gsum) - 1) / (rank + ${T} + (${T} - gsum)), 2) AS c FROM gridc
), ${cwl_value}

-- @metric INSQ
-- params: cwl_grid, cwl_value, T
WITH ${cwl_grid}, cont AS (
    SELECT *, pow((rank + 2 * ${T} - 1) / (rank + 2 * ${T}), 2) AS c FROM gridc
), ${cwl_value}

-- @metric NERR8
-- params: cwl_grid, cwl_value, k
WITH ${cwl_grid}, cont AS (
    SELECT *, CASE WHEN rank < ${k} THEN 1 - g ELSE 0 END AS c FROM gridc
), ${cwl_value}

-- @metric NERR9
-- params: cwl_grid, cwl_value, k
WITH ${cwl_grid}, cont AS (
    SELECT *, CASE WHEN rank < ${k} THEN rank / (rank + 1.0) * (1 - g) ELSE 0 END AS c FROM gridc
), ${cwl_value}

-- @metric NERR10
-- params: cwl_grid, cwl_value, p
WITH ${cwl_grid}, cont AS (
    SELECT *, ${p} * (1 - g) AS c FROM gridc
), ${cwl_value}

-- @metric NERR11
-- params: cwl_grid, cwl_value, T
WITH ${cwl_grid}, cont AS (
    SELECT *, pow((rank + 2 * ${T} - 1) / (rank + 2 * ${T}), 2) * (1 - g) AS c FROM gridc
), ${cwl_value}

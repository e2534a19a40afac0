-- The measures reviewed by Zhou & Yao, "Evaluating IR system performance based on user
-- preference", Journal of Intelligent Information Systems 34(3), 2010, Sec. 5. d_i = the gain of the doc at rank i (Zhou & Yao's "relevance value"; gains=0.1:0.2:0.3
-- reproduces their 0.x scale), d_I(i) = the ideal list's gains (every relevant qrels doc, highest
-- first), n = the cutoff k, or the number of docs retrieved when there is none.
--
--   SR@k   = sum_{i<=n} d_i / sum_{i<=n} d_I(i)                          sliding ratio (Pollack 1968)
--   MSR@k  = sum_{i<=n} d_i/i / sum_{i<=n} d_I(i)/i                      modified sliding ratio (Sagara 2002)
--   CG@k   = sum_{i<=k} d_i                                              cumulated gain (J-K 2000)
--   WAP    = (1/R) sum_{r: isrel} cg(r)/cg_I(r)                          weighted AP (Kando et al. 2001)
--   AGR    = WAP with adjusted gains d'_l = d_l - (R_l/R)(d_l - d_{l-1}) for the system and the
--            ideal list (Sakai 2003); d_{l-1} = gain of the next lower level (0 below level 1),
--            R_l = the topic's number of l-relevant docs
--   NDPM   = (2 C- + C_u) / (2 C)                                        Yao 1995; 0 = perfect
--   ADM    = 1 - sum_{d in D} |s_d - u_d| / |D|                          Mizzaro 2001
--   Kendall-tau = tau-b, Spearman = Pearson's r of average ranks, between the system's and the
--            user's orderings of D
--
-- The preference measures (NDPM, ADM, Kendall-tau, Spearman) work on the document set
-- D = retrieved docs (within the depth) + judged docs of the topic (judged docs only with
-- judged_only). The user's value u_d = the gain of d's level (0 for judged nonrelevant and
-- unjudged docs). The system's value s_d = the run's score under the trec_eval convention (equal
-- scores are ties), -rank (file order, no ties) under ntcireval or when the run has no scores;
-- unretrieved judged docs are tied below every retrieved doc (s_d = -inf; ADM uses s_d = 0).
-- NDPM is counted in SQL (its block), Kendall-tau/Spearman run as Python UDFs
-- (evalstore/metrics/udf_graded.py; NDPM too under trec_eval9); they are NULL
-- (left out of the mean) when undefined: no pair the user strictly prefers (NDPM) or no variation
-- on one side (Kendall-tau, Spearman).
--
-- Fragment preference_docs (NDPM, Kendall-tau, Spearman): d = per (qrels, run, topic) every retrieved doc (s = its score, or minus its rank under ntcireval / without scores) and every judged doc not retrieved (s = -inf, tied at the bottom), with u = the user's gain.

-- @fragment preference_docs
-- reads: rl_judged, rl_topics, rl_qrels, rl_retrieved
-- params: convention, judged_only
d AS (
    SELECT t.qrels_id, t.run_id, t.topic,
           CASE WHEN ${convention} = 'ntcireval' OR r.score IS NULL THEN -r.rank::DOUBLE ELSE r.score END AS s,
           coalesce(q.gain, 0.0) AS u
    FROM rl_topics t
    JOIN rl_retrieved r ON r.run_id = t.run_id AND r.topic = t.topic
    LEFT JOIN rl_qrels q ON q.qrels_id = t.qrels_id AND q.topic = r.topic AND q.doc = r.doc
    WHERE NOT ${judged_only} OR coalesce(q.judged, false)
    UNION ALL
    SELECT t.qrels_id, t.run_id, t.topic, '-inf'::DOUBLE AS s, q.gain AS u
    FROM rl_topics t
    JOIN rl_qrels q ON q.qrels_id = t.qrels_id AND q.topic = t.topic AND q.judged
    ANTI JOIN rl_judged j ON j.qrels_id = t.qrels_id AND j.run_id = t.run_id AND j.topic = t.topic AND j.doc = q.doc
)

-- @metric SR
-- reads: rl_judged, rl_topics, rl_ideal
-- params: has_cutoff, k
WITH n AS (
    SELECT qrels_id, run_id, topic, R_gain, CASE WHEN ${has_cutoff} THEN ${k} ELSE num_ret END AS n FROM rl_topics
), sys AS (
    SELECT j.qrels_id, j.run_id, j.topic, exact_sum(j.gain) AS s
    FROM rl_judged j JOIN n ON n.qrels_id = j.qrels_id AND n.run_id = j.run_id AND n.topic = j.topic
    WHERE j.rank <= n.n
    GROUP BY j.qrels_id, j.run_id, j.topic
)
SELECT n.qrels_id, n.run_id, n.topic, coalesce(s.s, 0) / i.icg AS value
FROM n
JOIN rl_ideal i ON i.qrels_id = n.qrels_id AND i.topic = n.topic AND i.rank = least(n.n, n.R_gain)
LEFT JOIN sys s ON s.qrels_id = n.qrels_id AND s.run_id = n.run_id AND s.topic = n.topic
WHERE i.icg > 0

-- @metric MSR
-- reads: rl_judged, rl_topics, rl_ideal
-- params: has_cutoff, k
WITH n AS (
    SELECT qrels_id, run_id, topic, R_gain, CASE WHEN ${has_cutoff} THEN ${k} ELSE num_ret END AS n FROM rl_topics
), sys AS (
    SELECT j.qrels_id, j.run_id, j.topic, exact_sum(j.gain / j.rank) AS s
    FROM rl_judged j JOIN n ON n.qrels_id = j.qrels_id AND n.run_id = j.run_id AND n.topic = j.topic
    WHERE j.rank <= n.n
    GROUP BY j.qrels_id, j.run_id, j.topic
), ideal AS (
    SELECT qrels_id, topic, rank,
           sum(gain / rank) OVER (PARTITION BY qrels_id, topic ORDER BY rank ROWS UNBOUNDED PRECEDING) AS h
    FROM rl_ideal
)
SELECT n.qrels_id, n.run_id, n.topic, coalesce(s.s, 0) / i.h AS value
FROM n
JOIN ideal i ON i.qrels_id = n.qrels_id AND i.topic = n.topic AND i.rank = least(n.n, n.R_gain)
LEFT JOIN sys s ON s.qrels_id = n.qrels_id AND s.run_id = n.run_id AND s.topic = n.topic
WHERE i.h > 0

-- @metric CG
-- reads: rl_judged
-- params: k
SELECT qrels_id, run_id, topic, exact_sum(gain) AS value
FROM rl_judged WHERE gain > 0 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic

-- @metric WAP
-- reads: rl_judged
-- needs: cg, cg_ideal
-- params: k
SELECT qrels_id, run_id, topic,
       exact_sum(CASE WHEN isrel = 1 AND rank <= ${k} AND cg_ideal > 0 THEN cg / cg_ideal END) / any_value(R) AS value
FROM rl_judged WHERE R > 0
GROUP BY qrels_id, run_id, topic

-- @metric AGR
-- reads: rl_judged, rl_topics, rl_qrels, rl_qtopics, qrels_meta
-- params: gains, k
WITH gl AS (
    -- the effective gains of levels 1..n (metric's gains=, else the qrels set's declared gains,
    -- else NULL = gain is the grade), as the engine resolves them for the ranked list
    SELECT qrels_id, coalesce(${gains}::DOUBLE[], string_split(default_gains, ':')::DOUBLE[]) AS gl
    FROM qrels_meta WHERE qrels_id IN (SELECT DISTINCT qrels_id FROM rl_topics)
), lvl AS (
    SELECT q.qrels_id, q.topic, q.grade, count(*) AS r_l, any_value(q.gain) AS d_l,
           CASE WHEN q.grade <= 1 THEN 0.0
                WHEN any_value(g.gl) IS NULL THEN (q.grade - 1)::DOUBLE
                ELSE any_value(g.gl)[q.grade - 1] END AS d_below
    FROM rl_qrels q JOIN gl g ON g.qrels_id = q.qrels_id
    WHERE q.isrel = 1
    GROUP BY q.qrels_id, q.topic, q.grade
), adj AS (
    SELECT l.qrels_id, l.topic, l.grade, l.d_l - (l.r_l / t.R) * (l.d_l - l.d_below) AS d_adj
    FROM lvl l JOIN rl_qtopics t ON t.qrels_id = l.qrels_id AND t.topic = l.topic
), ideal AS (
    -- (the window spelled out in full: Spark SQL has no OVER (w ROWS ...))
    SELECT q.qrels_id, q.topic,
           row_number() OVER (PARTITION BY q.qrels_id, q.topic ORDER BY a.d_adj DESC, q.grade DESC, q.doc) AS rank,
           sum(a.d_adj) OVER (PARTITION BY q.qrels_id, q.topic ORDER BY a.d_adj DESC, q.grade DESC, q.doc
                              ROWS UNBOUNDED PRECEDING) AS icg
    FROM rl_qrels q JOIN adj a ON a.qrels_id = q.qrels_id AND a.topic = q.topic AND a.grade = q.grade
), sys AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.rank, j.isrel, j.R,
           sum(coalesce(a.d_adj, 0)) OVER (PARTITION BY j.qrels_id, j.run_id, j.topic ORDER BY j.rank
                                           ROWS UNBOUNDED PRECEDING) AS acg
    FROM rl_judged j
    LEFT JOIN adj a ON a.qrels_id = j.qrels_id AND a.topic = j.topic AND a.grade = j.grade AND j.isrel = 1
    WHERE j.rank <= ${k} AND j.R > 0
)
SELECT s.qrels_id, s.run_id, s.topic, exact_sum(CASE WHEN s.isrel = 1 AND i.icg > 0 THEN s.acg / i.icg END) / any_value(s.R) AS value
FROM sys s
JOIN ideal i ON i.qrels_id = s.qrels_id AND i.topic = s.topic AND i.rank = least(s.rank, s.R)
GROUP BY s.qrels_id, s.run_id, s.topic

-- @metric NDPM
-- reads: rl_judged, rl_topics, rl_qrels, rl_retrieved
-- params: convention, judged_only, preference_docs
-- udfs: ndpm
-- NDPM = (2 C- + C_u) / (2 C) from counts, without D's rows: only the docs the user prefers to some
-- (gain > 0: relevant, few) are looked at one by one; every other doc of D has u = 0, and is counted.
-- Where the evaluation rank orders D's retrieved part by s (trec_eval, ntcireval), the docs above a
-- retrieved doc i with a strictly larger s are the ranks before the first of i's run of equal s:
--   C   = N(N-1)/2 - sum over gains v (0 included) of N_v(N_v-1)/2        N_v: docs of D with u = v
--   C_u = pairs of equal s and different u: in each run of equal s holding a doc with u > 0, and
--         among the judged docs not retrieved (s = -inf)
--   C-  = sum over retrieved i with u_i > 0 of (its run's first rank - 1) - #{retrieved j: u_j >= u_i, s_j > s_i}
--         + sum over not retrieved i with u_i > 0 of #{retrieved j: u_j < u_i}
-- trec_eval9 ranks by single-precision scores while D compares them in double: there, the UDF over
-- D's rows (evalstore/metrics/udf_graded.py, the reference these counts are tested against).
WITH ${preference_docs}, rel AS (
    -- D's retrieved docs with u > 0: s (minus the rank in D where there are no scores: the same
    -- order), and the rank in D (condensed with judged_only: D's retrieved part is the judged docs)
    SELECT qrels_id, run_id, topic, rank, gain AS u,
           CASE WHEN ${convention} = 'ntcireval' OR score IS NULL THEN -rank::DOUBLE ELSE score END AS s
    FROM rl_judged
    WHERE gain > 0 AND ${convention} <> 'trec_eval9'
), vals AS (
    SELECT DISTINCT qrels_id, run_id, topic, s FROM rel
), ret AS (
    -- D's retrieved docs that may tie with a doc of rel (none where s is minus the rank), with
    -- their rank in D
    SELECT r.run_id, r.topic, NULL::INTEGER AS qrels_id, r.rank, r.score AS s
    FROM rl_retrieved r WHERE NOT ${judged_only} AND ${convention} <> 'ntcireval' AND r.score IS NOT NULL
    UNION ALL
    SELECT run_id, topic, qrels_id, rank, score AS s
    FROM rl_judged WHERE ${judged_only} AND ${convention} <> 'ntcireval' AND judged AND score IS NOT NULL
), grp AS (
    -- the runs of equal s that hold a doc of rel: size and first rank in D (a doc alone where s is
    -- minus the rank)
    SELECT v.qrels_id, v.run_id, v.topic, v.s, greatest(count(x.rank), 1) AS m,
           coalesce(min(x.rank), -any_value(v.s)::BIGINT) AS first
    FROM vals v
    LEFT JOIN ret x ON x.run_id = v.run_id AND x.topic = v.topic AND x.s = v.s
                   AND coalesce(x.qrels_id, v.qrels_id) = v.qrels_id
    GROUP BY v.qrels_id, v.run_id, v.topic, v.s
), tied AS (
    -- per run of equal s: pairs with different u (the docs with u = 0 are those not in rel)
    SELECT g.qrels_id, g.run_id, g.topic,
           any_value(g.m) * (any_value(g.m) - 1) // 2 - sum(c.k * (c.k - 1) // 2)
           - (any_value(g.m) - sum(c.k)) * (any_value(g.m) - sum(c.k) - 1) // 2 AS pairs,
           any_value(g.first) - 1 AS above, sum(c.k) AS k
    FROM grp g
    JOIN (SELECT qrels_id, run_id, topic, s, u, count(*) AS k FROM rel GROUP BY ALL) c
      ON c.qrels_id = g.qrels_id AND c.run_id = g.run_id AND c.topic = g.topic AND c.s = g.s
    GROUP BY g.qrels_id, g.run_id, g.topic, g.s
), ret_key AS (
    SELECT qrels_id, run_id, topic, sum(pairs) AS tied_pairs, sum(above * k) AS above FROM tied GROUP BY ALL
), ge AS (
    -- per retrieved i with u > 0: the retrieved j with u_j >= u_i and a strictly larger s, counted
    -- per gain v among the docs with u >= v (rank() - 1 = the docs with a strictly larger s)
    SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE u = v) AS n_i,
           sum(above) FILTER (WHERE u = v) AS n
    FROM (SELECT r.qrels_id, r.run_id, r.topic, r.u, l.v,
                 rank() OVER (PARTITION BY r.qrels_id, r.run_id, r.topic, l.v ORDER BY r.s DESC) - 1 AS above
          FROM rel r
          JOIN (SELECT DISTINCT qrels_id, run_id, topic, u AS v FROM rel) l
            ON l.qrels_id = r.qrels_id AND l.run_id = r.run_id AND l.topic = r.topic AND r.u >= l.v)
    GROUP BY ALL
), lev AS (
    -- per gain v > 0: N_v (judged docs of the topic), of which r_v retrieved; rel_ge = retrieved with u >= v
    SELECT t.qrels_id, t.run_id, t.topic, t.num_ret, q.v, q.n_v, coalesce(sum(r.k) FILTER (WHERE r.u = q.v), 0) AS r_v,
           coalesce(sum(r.k) FILTER (WHERE r.u >= q.v), 0) AS rel_ge
    FROM rl_topics t
    JOIN (SELECT qrels_id, topic, gain AS v, count(*) AS n_v FROM rl_qrels WHERE judged AND gain > 0 GROUP BY ALL) q
      ON q.qrels_id = t.qrels_id AND q.topic = t.topic
    LEFT JOIN (SELECT qrels_id, run_id, topic, u, count(*) AS k FROM rel GROUP BY ALL) r
      ON r.qrels_id = t.qrels_id AND r.run_id = t.run_id AND r.topic = t.topic
    WHERE ${convention} <> 'trec_eval9'
    GROUP BY t.qrels_id, t.run_id, t.topic, t.num_ret, q.v, q.n_v
), lev_key AS (
    SELECT qrels_id, run_id, topic, sum(n_v) AS n_pos, sum(n_v * (n_v - 1) // 2) AS pos_pairs,
           sum(n_v - r_v) AS u_pos, sum((n_v - r_v) * (n_v - r_v - 1) // 2) AS u_pos_pairs,
           sum((n_v - r_v) * (num_ret - rel_ge)) AS below_unret
    FROM lev GROUP BY qrels_id, run_id, topic
), counted AS (
    SELECT t.qrels_id, t.run_id, t.topic, t.num_ret,
           t.R + t.N - coalesce(jj.n, 0) AS unret,  -- judged docs not retrieved (s = -inf)
           coalesce(lk.n_pos, 0) AS n_pos, coalesce(lk.pos_pairs, 0) AS pos_pairs,
           coalesce(lk.u_pos, 0) AS u_pos, coalesce(lk.u_pos_pairs, 0) AS u_pos_pairs,
           coalesce(lk.below_unret, 0) AS below_unret,
           coalesce(rk.tied_pairs, 0) AS tied_pairs, coalesce(rk.above, 0) - coalesce(g.n, 0) AS disc_ret
    FROM rl_topics t
    LEFT JOIN (SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE judged) AS n FROM rl_judged GROUP BY ALL) jj
      ON jj.qrels_id = t.qrels_id AND jj.run_id = t.run_id AND jj.topic = t.topic
    LEFT JOIN lev_key lk ON lk.qrels_id = t.qrels_id AND lk.run_id = t.run_id AND lk.topic = t.topic
    LEFT JOIN ret_key rk ON rk.qrels_id = t.qrels_id AND rk.run_id = t.run_id AND rk.topic = t.topic
    LEFT JOIN ge g ON g.qrels_id = t.qrels_id AND g.run_id = t.run_id AND g.topic = t.topic
    WHERE ${convention} <> 'trec_eval9'
), pairs AS (
    SELECT qrels_id, run_id, topic,
           (num_ret + unret) * (num_ret + unret - 1) // 2 - pos_pairs
           - (num_ret + unret - n_pos) * (num_ret + unret - n_pos - 1) // 2 AS c,
           tied_pairs + unret * (unret - 1) // 2 - u_pos_pairs - (unret - u_pos) * (unret - u_pos - 1) // 2 AS c_u,
           disc_ret + below_unret AS c_minus,
           num_ret + unret AS n
    FROM counted
)
SELECT qrels_id, run_id, topic,
       CASE WHEN c > 0 THEN (2 * c_minus + c_u)::DOUBLE / (2 * c)::DOUBLE END AS value
FROM pairs WHERE n > 0
UNION ALL
SELECT qrels_id, run_id, topic, ndpm(list(s), list(u)) AS value
FROM d WHERE ${convention} = 'trec_eval9'
GROUP BY qrels_id, run_id, topic

-- @metric Kendall-tau
-- params: preference_docs
-- udfs: kendall_tau_b
WITH ${preference_docs}
SELECT qrels_id, run_id, topic, kendall_tau_b(list(s), list(u)) AS value
FROM d GROUP BY qrels_id, run_id, topic

-- @metric Spearman
-- params: preference_docs
-- udfs: spearman_rho
WITH ${preference_docs}
SELECT qrels_id, run_id, topic, spearman_rho(list(s), list(u)) AS value
FROM d GROUP BY qrels_id, run_id, topic

-- @metric ADM
-- reads: rl_judged, rl_topics, rl_qrels, rl_retrieved, run_meta
-- params: judged_only
WITH d AS (
    SELECT t.qrels_id, t.run_id, t.topic, r.score AS s, coalesce(q.gain, 0.0) AS u, TRUE AS retrieved
    FROM rl_topics t
    JOIN rl_retrieved r ON r.run_id = t.run_id AND r.topic = t.topic
    LEFT JOIN rl_qrels q ON q.qrels_id = t.qrels_id AND q.topic = r.topic AND q.doc = r.doc
    WHERE NOT ${judged_only} OR coalesce(q.judged, false)
    UNION ALL
    SELECT t.qrels_id, t.run_id, t.topic, 0.0 AS s, q.gain AS u, FALSE AS retrieved
    FROM rl_topics t
    JOIN rl_qrels q ON q.qrels_id = t.qrels_id AND q.topic = t.topic AND q.judged
    ANTI JOIN rl_judged j ON j.qrels_id = t.qrels_id AND j.run_id = t.run_id AND j.topic = t.topic AND j.doc = q.doc
)
SELECT d.qrels_id, d.run_id, d.topic,
       CASE WHEN count(*) FILTER (WHERE d.retrieved AND d.s IS NULL) > 0
            THEN error('ADM needs run scores on the judgment (gain) scale, but run ' || any_value(m.name)
                       || ' has no scores (an NTCIR res file?); ADM cannot be computed for it')
            ELSE 1.0 - exact_sum(abs(d.s - d.u)) / count(*) END AS value
FROM d JOIN run_meta m ON m.run_id = d.run_id
GROUP BY d.qrels_id, d.run_id, d.topic

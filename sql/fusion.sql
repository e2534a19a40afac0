-- Rank fusion of stored runs, for all topics at once (evalstore/fusion/compute.py renders it; the
-- expressions come from the registry, evalstore/fusion/registry.py, the values from two temporary
-- tables, never from the text).
--
-- Placeholders:
--   ${inputs}       table (pos, run_id): the input runs, pos = 1.. in the order given
--   ${candidates}   table (cand, pos, w, <one column per method parameter>): one fusion per cand
--                   (one for `fuse`, every grid point for `fuse --optimize`), w = the run's weight
--   ${rank_column}  rank (the evaluation rank: score descending, docno descending) or
--                   submitted_rank (the rank column as written)
--   ${depth}        the documents of each input run considered per topic (a huge number: all)
--   ${norm}, ${norm_missing}      the normalisation of a present document, and of a candidate the
--                                 run lacks (NULL: it stays missing)
--   ${value}, ${value_missing}    a run's contribution for a document, and for a candidate the run
--                                 lacks after normalisation (NULL: none)
--   ${combine}      the aggregate of the contributions v (weights w) of a document over the runs
--   ${param_columns} the method's parameter columns (cd.<name>), carried to the contributions
--   ${top}          the documents kept per topic in each fusion (a huge number: all)
--
-- Two blocks: `normalized` (one row per input run and candidate document of a topic) and `fused`
-- (one row per fusion, topic and document, with its score and rank). Sums run in the order of
-- the runs (list_sum over an ordered list): the same additions as ranx's, and the same double
-- whatever the number of threads.

-- @block normalized
WITH inp AS (
    SELECT i.pos, r.topic, r.doc, r.score, r.${rank_column} AS p
    FROM run_row_data r JOIN ${inputs} i ON i.run_id = r.run_id
    WHERE r.${rank_column} <= ${depth}
),
docs AS (SELECT DISTINCT topic, doc FROM inp),
cands AS (SELECT topic, count(*) AS c FROM docs GROUP BY topic),
stats AS (
    SELECT pos, topic, count(*) AS n, min(score) AS s_min, max(score) AS s_max,
           list_sum(list(score ORDER BY p, doc DESC)) AS s_sum
    FROM inp GROUP BY pos, topic
),
spread AS (
    SELECT i.pos, i.topic,
           sqrt(list_sum(list((i.score - st.s_sum / st.n) ** 2 ORDER BY i.p, i.doc DESC)) / any_value(st.n)) AS s_sd
    FROM inp i JOIN stats st USING (pos, topic)
    GROUP BY i.pos, i.topic
),
grid AS (
    SELECT ri.pos, d.topic, d.doc, i.score, i.p, i.doc IS NOT NULL AS present, coalesce(st.n, 0) AS n, cs.c,
           st.s_min, st.s_max, st.s_sum, st.s_sum / st.n AS s_mean, sp.s_sd
    FROM ${inputs} ri
    CROSS JOIN docs d
    JOIN cands cs ON cs.topic = d.topic
    LEFT JOIN inp i ON i.pos = ri.pos AND i.topic = d.topic AND i.doc = d.doc
    LEFT JOIN stats st ON st.pos = ri.pos AND st.topic = d.topic
    LEFT JOIN spread sp ON sp.pos = ri.pos AND sp.topic = d.topic
)
SELECT pos, topic, doc, present, n, c, p,
       CASE WHEN present THEN (${norm}) ELSE (${norm_missing}) END AS s,
       present OR (${norm_missing}) IS NOT NULL AS counted
FROM grid

-- @block fused
, valued AS (
    SELECT cd.cand, g.pos, g.topic, g.doc, cd.w${param_columns},
           CASE WHEN g.counted THEN (${value}) ELSE (${value_missing}) END AS v
    FROM normalized g JOIN ${candidates} cd ON cd.pos = g.pos
),
fused AS (
    SELECT cand, topic, doc, ${combine} AS score
    FROM valued WHERE v IS NOT NULL
    GROUP BY cand, topic, doc
)
SELECT cand, topic, doc, score,
       row_number() OVER (PARTITION BY cand, topic ORDER BY score DESC, doc DESC) AS rank
FROM fused
QUALIFY rank <= ${top}

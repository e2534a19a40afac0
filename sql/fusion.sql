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
-- Two blocks of common table expressions: `normalized` ends with the relation normalized (one row
-- per input run and candidate document of a topic), `fused` with the fusions (one row per fusion,
-- topic and document, with its score and rank). Documents and topics are numbered once (did, tid;
-- did in docno order within a topic, so that did DESC is docno DESC) and everything after works
-- on the numbers. Sums run in the order of the runs (the sum macro of compute.py; list_sum of an
-- ordered list for the normalisation's sums): the same additions as ranx's, and the same double
-- whatever the number of threads.

-- @block normalized
input_rows AS (
    SELECT i.pos, r.topic, r.doc, r.score, r.${rank_column} AS p
    FROM run_row_data r JOIN ${inputs} i ON i.run_id = r.run_id
    WHERE r.${rank_column} <= ${depth}
),
docs AS (
    SELECT topic, doc, row_number() OVER (ORDER BY topic, doc) AS did, dense_rank() OVER (ORDER BY topic) AS tid
    FROM (SELECT DISTINCT topic, doc FROM input_rows)
),
inp AS (
    SELECT r.pos, d.tid, d.did, r.score, r.p
    FROM input_rows r JOIN docs d ON d.topic = r.topic AND d.doc = r.doc
),
cands AS (SELECT tid, count(*) AS c FROM docs GROUP BY tid),
stats AS (
    SELECT pos, tid, count(*) AS n, min(score) AS s_min, max(score) AS s_max,
           list_sum(list(score ORDER BY p, did DESC)) AS s_sum
    FROM inp GROUP BY pos, tid
),
spread AS (
    SELECT i.pos, i.tid,
           sqrt(list_sum(list((i.score - st.s_sum / st.n) ** 2 ORDER BY i.p, i.did DESC)) / any_value(st.n)) AS s_sd
    FROM inp i JOIN stats st ON st.pos = i.pos AND st.tid = i.tid
    GROUP BY i.pos, i.tid
),
grid AS (
    SELECT ri.pos, d.tid, d.did, i.score, i.p, i.did IS NOT NULL AS present, coalesce(st.n, 0) AS n, cs.c,
           st.s_min, st.s_max, st.s_sum, st.s_sum / st.n AS s_mean, sp.s_sd
    FROM ${inputs} ri
    CROSS JOIN docs d
    JOIN cands cs ON cs.tid = d.tid
    LEFT JOIN inp i ON i.pos = ri.pos AND i.did = d.did
    LEFT JOIN stats st ON st.pos = ri.pos AND st.tid = d.tid
    LEFT JOIN spread sp ON sp.pos = ri.pos AND sp.tid = d.tid
),
normalized AS (
    SELECT pos, tid, did, present, n, c, p,
           CASE WHEN present THEN (${norm}) ELSE (${norm_missing}) END AS s,
           present OR (${norm_missing}) IS NOT NULL AS counted
    FROM grid
)

-- @block fused
, valued AS (
    SELECT cd.cand, g.pos, g.tid, g.did, cd.w${param_columns},
           CASE WHEN g.counted THEN (${value}) ELSE (${value_missing}) END AS v
    FROM normalized g JOIN ${candidates} cd ON cd.pos = g.pos
),
fused AS (
    SELECT cand, any_value(tid) AS tid, did, ${combine} AS score
    FROM valued WHERE v IS NOT NULL
    GROUP BY cand, did
),
ranked AS (
    SELECT cand, did, score,
           row_number() OVER (PARTITION BY cand, tid ORDER BY score DESC, did DESC) AS rank
    FROM fused
    QUALIFY rank <= ${top}
)
SELECT r.cand, d.topic, d.doc, r.score, r.rank
FROM ranked r JOIN docs d ON d.did = r.did

-- Weighted reciprocal rank (Eguchi et al., in Sakai's form) and its normalised version.
--
-- Source: Sakai, "On the properties of evaluation metrics for finding one highly relevant document",
-- IPSJ TOD 2007 (Sec. 3.2, Eqs. 4 and 5), as in Sakai, AIRS 2006.
-- r_1 = rank of the first relevant doc (level >= 1), L_1 = its level, M = the highest level
-- that exists for the topic in the qrels (per topic: not the collection's top level and not the
-- top level retrieved), beta(L) = the penalty of level L (> 1, smallest for the highest level).
--
--   WRR  = 1 / (r_1 - 1/beta(L_1))                       (Eq. 4; bounded by 1/(1 - 1/beta(M)))
--   NWRR = (1 - 1/beta(M)) / (r_1 - 1/beta(L_1))         (Eq. 5; bounded by 1)
-- Both are 0 when no relevant doc is retrieved (within the top k with @k).
--
-- ${penalties}: beta of levels 1..n in the order of gains= (the paper's beta(S)=2, beta(A)=3,
-- beta(B)=4 is [4, 3, 2]). NULL = the default beta(l) = n + 2 - l (top level 2, one more per
-- level below), n = the qrels set's number of levels: the length of its declared default gains,
-- else its highest grade (for a subsample, the larger of its own and its parent's).
--
-- Fragment first_relevant (shared by both blocks): lv = the number of levels n of each qrels set,
-- first = r_1, L_1 and the topic's top level M per (qrels, run, topic), pen = the penalty list.

-- @fragment first_relevant
-- reads: rl_judged, rl_topics, qrels_meta, subsample_meta
-- params: k, penalties
lv AS (
    SELECT m.qrels_id,
           coalesce(len(string_split(coalesce(m.default_gains, p.default_gains), ':')),
                    greatest(m.max_grade, p.max_grade)) AS n_levels
    FROM qrels_meta m
    LEFT JOIN subsample_meta s ON s.qrels_id = m.qrels_id
    LEFT JOIN qrels_meta p ON p.qrels_id = s.parent_id
    WHERE m.qrels_id IN (SELECT DISTINCT qrels_id FROM rl_topics)
), first AS (
    SELECT qrels_id, run_id, topic, min(rank) AS r1, arg_min(grade, rank) AS l1, any_value(max_grade) AS top
    FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
    GROUP BY qrels_id, run_id, topic
), pen AS (
    SELECT f.*, coalesce(${penalties}::DOUBLE[],
                         list_transform(range(1, lv.n_levels + 1), lambda l: (lv.n_levels + 2 - l)::DOUBLE)) AS pl
    FROM first f JOIN lv USING (qrels_id)
)

-- @metric WRR
-- params: first_relevant
WITH ${first_relevant}
SELECT qrels_id, run_id, topic,
       CASE WHEN top > len(pl)
            THEN error('WRR: topic ' || topic || ' has relevance level ' || top || ' but the penalties cover levels 1..'
                       || len(pl) || '; give one penalty per level, e.g. WRR(penalties=4:3:2)')
            ELSE 1.0 / (r1 - 1.0 / pl[l1]) END AS value
FROM pen

-- @metric NWRR
-- params: first_relevant
WITH ${first_relevant}
SELECT qrels_id, run_id, topic,
       CASE WHEN top > len(pl)
            THEN error('NWRR: topic ' || topic || ' has relevance level ' || top || ' but the penalties cover levels 1..'
                       || len(pl) || '; give one penalty per level, e.g. NWRR(penalties=4:3:2)')
            ELSE (1.0 - 1.0 / pl[top]) / (r1 - 1.0 / pl[l1]) END AS value
FROM pen

-- The judged lists of generated answers: what the nugget and support metrics read, as the
-- ranked judged list (sql/ranked_list.sql) is what the ranked-list metrics read.
--
-- Built by evalstore/metrics/answer_lists.py once per evaluation context of kind 'nuggets' or
-- 'support', for all requested runs and judged sets at once. Two scripts, each starting at its
-- '-- @kind NAME' line; placeholders: ${qrels_ids}, ${run_ids}, ${complete} (TRUE: every topic of
-- the set is evaluated for every run, a topic without a judged answer scoring as nothing).
--
--   rl_topics(qrels_id, run_id, topic, in_run, length)
--       the evaluated (set, run, topic) triples, as for ranked lists: nuggets: every answer the
--       assignment set judges (assigned_answer_data); support: every answer with a label in the
--       support set, and every answer without any citation of a run the set labels, on a topic the
--       set labels (nothing to label: it scores 0); in_run: the answer is judged (false for a topic
--       added by complete); length: the answer's response length (NULL without a stored answer)
--   rl_nuggets(qrels_id, run_id, topic, nugget, text, importance, vital, assignment, grade, length)
--       each nugget assigned to a judged answer (nugget: its 0-based position in the topic's
--       nuggets; text, importance: the nugget set's): vital (else okay), grade 2 support, 1
--       partial_support, 0 not_support
--   rl_citations(qrels_id, run_id, topic, sentence, text, citation, doc, label, grade, credit)
--       each (sentence, citation) pair of a judged answer, and each sentence without a citation
--       (citation and doc NULL): the sentence's text, the document cited, the support label and
--       its grade (2 full, 1 partial, 0 none; NULL unlabelled), credit = grade / 2 (an unlabelled
--       citation counts as none, as an unjudged document counts as non-relevant; NULL for a
--       sentence without a citation)

-- @kind nuggets
CREATE OR REPLACE TEMP TABLE rl_judged_answers AS
SELECT j.qrels_id, r.run_id, j.topic, a.response_length AS length
FROM assigned_answer_data j
JOIN run_meta r ON r.name = j.run
LEFT JOIN answer_data a ON a.run_id = r.run_id AND a.topic = j.topic
WHERE j.qrels_id IN (${qrels_ids}) AND r.run_id IN (${run_ids});

CREATE OR REPLACE TEMP TABLE rl_nuggets AS
SELECT j.qrels_id, j.run_id, j.topic, a.nugget, d.text, d.importance, d.importance = 'vital' AS vital, a.assignment,
       a.grade, j.length
FROM rl_judged_answers j
JOIN run_meta r ON r.run_id = j.run_id
JOIN assignment_data a ON a.qrels_id = j.qrels_id AND a.run = r.name AND a.topic = j.topic
JOIN qrels_meta q ON q.qrels_id = a.qrels_id
JOIN nugget_data d ON d.nuggets_id = q.nuggets_id AND d.topic = a.topic AND d.nugget = a.nugget;

CREATE OR REPLACE TEMP TABLE rl_topics AS
SELECT qrels_id, run_id, topic, TRUE AS in_run, length FROM rl_judged_answers
UNION ALL
SELECT q.qrels_id, u.run_id, t.topic, FALSE AS in_run, a.response_length AS length
FROM qrels_meta q
JOIN nugget_topic_data t ON t.nuggets_id = q.nuggets_id
CROSS JOIN (SELECT DISTINCT run_id FROM rl_judged_answers) u
LEFT JOIN answer_data a ON a.run_id = u.run_id AND a.topic = t.topic
WHERE ${complete} AND q.qrels_id IN (${qrels_ids})
  AND NOT EXISTS (SELECT 1 FROM rl_judged_answers j
                  WHERE j.qrels_id = q.qrels_id AND j.run_id = u.run_id AND j.topic = t.topic);

-- @kind support
CREATE OR REPLACE TEMP TABLE rl_judged_answers AS
WITH labelled AS (
    SELECT DISTINCT s.qrels_id, r.run_id, s.topic
    FROM support_data s JOIN run_meta r ON r.name = s.run
    WHERE s.qrels_id IN (${qrels_ids}) AND r.run_id IN (${run_ids})
), uncited AS (
    SELECT a.run_id, a.topic, a.response_length FROM answer_data a
    WHERE a.run_id IN (${run_ids}) AND NOT EXISTS (
        SELECT 1 FROM answer_sentence_data s WHERE s.run_id = a.run_id AND s.topic = a.topic AND len(s.citations) > 0)
)
SELECT l.qrels_id, l.run_id, l.topic, a.response_length AS length
FROM labelled l LEFT JOIN answer_data a ON a.run_id = l.run_id AND a.topic = l.topic
UNION
SELECT k.qrels_id, u.run_id, u.topic, u.response_length AS length
FROM uncited u
JOIN (SELECT DISTINCT qrels_id, run_id FROM labelled) k ON k.run_id = u.run_id
JOIN (SELECT DISTINCT qrels_id, topic FROM labelled) t ON t.qrels_id = k.qrels_id AND t.topic = u.topic;

CREATE OR REPLACE TEMP TABLE rl_citations AS
WITH pairs AS (
    SELECT j.qrels_id, j.run_id, j.topic, s.sentence, s.text, c.citation
    FROM rl_judged_answers j
    JOIN answer_sentence_data s ON s.run_id = j.run_id AND s.topic = j.topic
    LEFT JOIN LATERAL (SELECT unnest(s.citations) AS citation) c ON TRUE
)
SELECT p.qrels_id, p.run_id, p.topic, p.sentence, p.text, p.citation, d.doc, l.label, l.grade,
       CASE WHEN p.citation IS NULL THEN NULL ELSE coalesce(l.grade, 0) / 2.0 END AS credit
FROM pairs p
JOIN run_meta r ON r.run_id = p.run_id
LEFT JOIN run_row_data d ON d.run_id = p.run_id AND d.topic = p.topic AND d.rank = p.citation + 1
LEFT JOIN support_data l ON l.qrels_id = p.qrels_id AND l.run = r.name AND l.topic = p.topic
                        AND l.sentence = p.sentence AND l.citation = p.citation;

CREATE OR REPLACE TEMP TABLE rl_topics AS
SELECT qrels_id, run_id, topic, TRUE AS in_run, length FROM rl_judged_answers
UNION ALL
SELECT t.qrels_id, u.run_id, t.topic, FALSE AS in_run, a.response_length AS length
FROM (SELECT DISTINCT qrels_id, topic FROM support_data WHERE qrels_id IN (${qrels_ids})) t
CROSS JOIN (SELECT DISTINCT run_id FROM rl_judged_answers) u
LEFT JOIN answer_data a ON a.run_id = u.run_id AND a.topic = t.topic
WHERE ${complete}
  AND NOT EXISTS (SELECT 1 FROM rl_judged_answers j
                  WHERE j.qrels_id = t.qrels_id AND j.run_id = u.run_id AND j.topic = t.topic);

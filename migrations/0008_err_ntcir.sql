-- evalstore schema, migration 8: NTCIREVAL's ERR and nERR are renamed ERR-ntcir and nERR-ntcir.
--
-- Up to version 7, ERR and nERR were NTCIREVAL's linear-gain forms (stop probability
-- g/(g_max+1)). From version 8 the name ERR means what it means in ir_measures (gdeval's ERR@k,
-- stop probability (2^g - 1)/2^max_rel), and NTCIREVAL's forms are stored as ERR-ntcir and
-- nERR-ntcir. Stored scores, evaluations (metric and params' "metric"), and the metric columns of
-- the meta-evaluation tables are renamed; the values are unchanged (they were NTCIREVAL's).

CREATE MACRO evalstore_err_ntcir(m) AS
    CASE WHEN m = 'ERR' OR m LIKE 'ERR@%' OR m LIKE 'ERR(%' THEN 'ERR-ntcir' || substr(m, 4)
         WHEN m = 'nERR' OR m LIKE 'nERR@%' OR m LIKE 'nERR(%' THEN 'nERR-ntcir' || substr(m, 5)
         ELSE m END;

UPDATE evaluations SET metric = evalstore_err_ntcir(metric),
                       params = CASE WHEN json_extract_string(params, '$.metric') IN ('ERR', 'nERR')
                                     THEN json_merge_patch(params, json_object('metric', json_extract_string(params, '$.metric') || '-ntcir'))
                                     ELSE params END
WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE score_data SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_correlations SET metric_a = evalstore_err_ntcir(metric_a), metric_b = evalstore_err_ntcir(metric_b);
UPDATE meta_discpower SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_effects SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_knees SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_pair_tests SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_robustness_trials SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_swap SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;
UPDATE meta_swap_bins SET metric = evalstore_err_ntcir(metric) WHERE evalstore_err_ntcir(metric) <> metric;

DROP MACRO evalstore_err_ntcir;

-- Effect sizes and confidence intervals of paired comparisons (evalstore compare --effects),
-- one row per (column, run, other run); the analysis itself is a meta_runs row of kind 'compare'
-- and its tests are meta_pair_tests rows (run_a = the run compared, run_b = the baseline or the
-- other run of the pair). Definitions: docs/meta.md, "Comparing runs".
CREATE TABLE meta_effects (
    analysis_id BIGINT NOT NULL,
    qrels       VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,     -- as stored in scores.metric
    run         VARCHAR NOT NULL,
    other       VARCHAR NOT NULL,     -- the baseline, or the other run of the pair
    n_topics    INTEGER NOT NULL,
    diff        DOUBLE NOT NULL,      -- mean of per-topic differences run - other
    ci_t_lo     DOUBLE,               -- 95 % paired t interval
    ci_t_hi     DOUBLE,
    ci_boot_lo  DOUBLE,               -- 95 % bootstrap percentile interval (B topic samples)
    ci_boot_hi  DOUBLE,
    d_z         DOUBLE,               -- diff / sd of the differences
    smd         DOUBLE                -- diff / sqrt(V_E), V_E of the two-way ANOVA without replication (Sakai)
);

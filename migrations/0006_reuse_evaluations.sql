-- evalstore schema, migration 6: what each stored evaluation was computed from (issue 15).
--
-- Evaluating again reuses a stored (run, qrels, metric) evaluation instead of recomputing it when
-- the run's content (run_meta.sha256), the qrels set's content (qrels_meta.sha256), the canonical
-- metric (metric and params, which hold every parameter resolved and the evaluation options), the
-- pool option (subsamples: the parent's dropped documents as pooled-but-unjudged, for infAP) and
-- engine_version are all the same. Rows stored before this migration have NULL hashes and are
-- never reused: the next evaluation recomputes and replaces them.
ALTER TABLE evaluations ADD COLUMN run_sha256 VARCHAR;
ALTER TABLE evaluations ADD COLUMN qrels_sha256 VARCHAR;
ALTER TABLE evaluations ADD COLUMN pool BOOLEAN;

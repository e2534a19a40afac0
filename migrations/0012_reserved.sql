-- evalstore schema, migration 12: reserved (a placeholder; migrations are numbered 1..n without
-- gaps, and number 12 belongs to the evaluation-speed work). It changes nothing.
SELECT 1;

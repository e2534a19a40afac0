-- evalstore schema, migration 14: reserved (a placeholder; migrations are numbered 1..n without
-- gaps, and number 14 belongs to another branch's work). It changes nothing.
SELECT 1;

-- Placeholder for migration 8, which is reserved for a change being made on main at the same time
-- as the diversity branch (whose schema change is 0009). Migrations must be numbered 1..n, so the
-- diversity branch carries this empty step to stay usable on its own. DELETE THIS FILE when merging
-- with main's real 0008 (stores created on the branch alone are test stores only).
SELECT 1;

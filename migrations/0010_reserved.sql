-- Placeholder for migration 10, which is reserved for a change being made on main at the same time
-- as the repro branch (whose schema change is 0011). Migrations must be numbered 1..n, so the repro
-- branch carries this empty step to stay usable on its own. DELETE THIS FILE when merging with
-- main's real 0010 (stores created on the branch alone are test stores only).
SELECT 1;

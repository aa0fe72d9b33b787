-- The end of a build whose schema does not settle (HammerDB's): statistics for the
-- planner only, no freezing and no checkpoint, as HammerDB 4.12 leaves its build.
ANALYZE

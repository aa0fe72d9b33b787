-- The end of a build, before the checkpoint (finish_checkpoint.sql). Freezing sets
-- every loaded row's hint bits and the visibility map once, now: otherwise the first
-- timed run's reads would set the hint bits, dirtying and writing every loaded page
-- again, and index-only scans would have to visit the heap. ANALYZE gives the planner
-- its statistics. VACUUM cannot run inside a transaction block: a statement of its own.
VACUUM (FREEZE, ANALYZE)

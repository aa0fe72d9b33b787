-- Statistics for the planner, then the WAL written back into the database file and
-- truncated, so the first timed run starts from a clean log.
ANALYZE;
PRAGMA wal_checkpoint(TRUNCATE);

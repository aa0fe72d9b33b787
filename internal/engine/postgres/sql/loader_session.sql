-- A load connection's setting: a load is rebuilt on failure, not recovered, so its
-- commits need not wait for the WAL flush. FinishBuild's CHECKPOINT makes it durable.
SET synchronous_commit = off

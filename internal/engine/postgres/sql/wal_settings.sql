-- What bounds the WAL a build leaves (see footprint): max_wal_size in bytes and the
-- checkpoint_completion_target that sets the checkpoint distance.
SELECT pg_size_bytes(current_setting('max_wal_size')), current_setting('checkpoint_completion_target')::float8

-- Where the server keeps its data and its redo log (relative: in the data directory).
SELECT @@datadir, COALESCE(@@innodb_log_group_home_dir, '')

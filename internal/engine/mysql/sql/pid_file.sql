-- The server's pid file (relative: in the data directory) and the data directory.
SELECT @@pid_file, @@datadir

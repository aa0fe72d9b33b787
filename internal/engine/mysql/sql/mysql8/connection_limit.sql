-- The server's connection limit and the connections it holds now (every client's,
-- storbench's own included); one more than max_connections is kept for a SUPER user.
SELECT @@max_connections, (SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Threads_connected')

-- The server's connection limit and the connections it holds now (every client's,
-- storbench's own included); one more than max_connections is kept for a SUPER user.
SELECT @@max_connections, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED')

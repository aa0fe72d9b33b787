-- The server's limit on prepared statements, all sessions together, and the
-- statements its sessions hold now (storbench's own included).
SELECT @@max_prepared_stmt_count, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'PREPARED_STMT_COUNT')

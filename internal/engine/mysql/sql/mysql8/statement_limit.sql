-- The server's limit on prepared statements, all sessions together, and the
-- statements its sessions hold now (storbench's own included).
SELECT @@max_prepared_stmt_count, (SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Prepared_stmt_count')

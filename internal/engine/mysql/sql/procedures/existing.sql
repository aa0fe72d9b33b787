-- storbench's stored procedures in the current database (their names start with
-- storbench_): Drop and a rebuild drop them by these names.
SELECT routine_name FROM information_schema.routines
 WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE'
   AND routine_name LIKE 'storbench\_%'
 ORDER BY routine_name

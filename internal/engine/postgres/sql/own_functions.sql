-- storbench's stored procedures in the current schema, as DROP ROUTINE takes them.
SELECT p.oid::regprocedure::text FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.proname LIKE 'storbench\_%'
ORDER BY 1

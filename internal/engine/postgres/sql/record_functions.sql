-- storbench's functions (functions.sql), entered in the transaction that creates them.
INSERT INTO storbench_objects (kind, name)
SELECT 'routine', p.oid::regprocedure::text FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.proname LIKE 'storbench\_%';

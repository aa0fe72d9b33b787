-- HammerDB's PostgreSQL build (pgoltp.tcl) leaves DBMS_RANDOM and its five transaction
-- routines, as procedures or functions by its option, in the schema of its tables:
-- all six there, beside tables without storbench's record, is a database HammerDB built.
SELECT count(DISTINCT p.proname) = 6 FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema()
  AND p.proname IN ('dbms_random', 'neword', 'payment', 'delivery', 'ostat', 'slev')

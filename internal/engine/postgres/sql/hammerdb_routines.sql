-- HammerDB's PostgreSQL build (pgoltp.tcl) leaves DBMS_RANDOM and its five transaction
-- routines, as procedures or functions by its option, in the schema of its tables:
-- all six there is a database HammerDB built. Their names as DROP ROUTINE takes them;
-- none unless all six are there.
WITH r AS (
  SELECT p.proname, p.oid::regprocedure::text AS routine FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = current_schema()
    AND p.proname IN ('dbms_random', 'neword', 'payment', 'delivery', 'ostat', 'slev')
)
SELECT routine FROM r WHERE (SELECT count(DISTINCT proname) FROM r) = 6 ORDER BY routine

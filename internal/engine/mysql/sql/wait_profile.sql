-- The clients' cumulative time, in picoseconds, from performance_schema's summaries by
-- user (foreground threads only; those of connections that ended are kept there):
-- their top-level statements (a procedure's own statements, statement/sp/*, run inside
-- its CALL), the waits it times inside them by event, and InnoDB's row lock waits
-- (milliseconds in its status; performance_schema does not time them). Empty when
-- performance_schema is off.
SELECT 'statements', COALESCE(SUM(SUM_TIMER_WAIT), 0)
FROM performance_schema.events_statements_summary_by_user_by_event_name
WHERE @@performance_schema AND (EVENT_NAME LIKE 'statement/sql/%' OR EVENT_NAME LIKE 'statement/com/%')
HAVING COUNT(*) > 0
UNION ALL
SELECT EVENT_NAME, SUM(SUM_TIMER_WAIT)
FROM performance_schema.events_waits_summary_by_user_by_event_name
WHERE @@performance_schema AND SUM_TIMER_WAIT > 0
  AND (EVENT_NAME LIKE 'wait/io/file/%' OR EVENT_NAME LIKE 'wait/lock/metadata/%' OR EVENT_NAME LIKE 'wait/synch/%')
GROUP BY EVENT_NAME
UNION ALL
SELECT 'innodb_row_lock_time', VARIABLE_VALUE * 1000000000
FROM information_schema.GLOBAL_STATUS
WHERE @@performance_schema AND VARIABLE_NAME = 'INNODB_ROW_LOCK_TIME'

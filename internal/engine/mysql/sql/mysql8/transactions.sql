-- HammerDB's MySQL TPM on MySQL 8, which moved the global status to performance_schema:
-- COMMIT and ROLLBACK statements, server-wide; and the uptime, which tells a restart.
SELECT SUM(CASE WHEN VARIABLE_NAME IN ('Com_commit', 'Com_rollback') THEN CAST(VARIABLE_VALUE AS UNSIGNED) ELSE 0 END),
       MAX(CASE WHEN VARIABLE_NAME = 'Uptime' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END)
  FROM performance_schema.global_status
 WHERE VARIABLE_NAME IN ('Com_commit', 'Com_rollback', 'Uptime')

-- HammerDB's MySQL TPM: COMMIT and ROLLBACK statements, server-wide; and the server's
-- uptime, which tells a restart (the counters start again). MariaDB keeps the global
-- status in information_schema (MySQL 8 in performance_schema: mysql8/).
SELECT SUM(CASE WHEN VARIABLE_NAME IN ('COM_COMMIT', 'COM_ROLLBACK') THEN CAST(VARIABLE_VALUE AS UNSIGNED) ELSE 0 END),
       MAX(CASE WHEN VARIABLE_NAME = 'UPTIME' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END)
  FROM information_schema.GLOBAL_STATUS
 WHERE VARIABLE_NAME IN ('COM_COMMIT', 'COM_ROLLBACK', 'UPTIME')

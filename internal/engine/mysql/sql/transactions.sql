-- HammerDB's MySQL TPM: COMMIT and ROLLBACK statements, server-wide. MariaDB keeps the
-- global status in information_schema (MySQL 8 in performance_schema: mysql8/).
SELECT SUM(CAST(VARIABLE_VALUE AS UNSIGNED)) FROM information_schema.GLOBAL_STATUS
 WHERE VARIABLE_NAME IN ('COM_COMMIT', 'COM_ROLLBACK')

-- HammerDB's MySQL TPM on MySQL 8, which moved the global status to performance_schema:
-- COMMIT and ROLLBACK statements, server-wide.
SELECT SUM(CAST(VARIABLE_VALUE AS UNSIGNED)) FROM performance_schema.global_status
 WHERE VARIABLE_NAME IN ('Com_commit', 'Com_rollback')

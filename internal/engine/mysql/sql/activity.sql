-- The observer's counters, whole server (Activity names them).
SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback',
  'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_requests', 'Innodb_os_log_written',
  'Innodb_data_fsyncs', 'Innodb_data_written')

-- Where the server keeps its files (needs superuser or pg_read_all_settings).
SELECT current_setting('data_directory')

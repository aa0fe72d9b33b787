-- The database file's absolute path.
SELECT file FROM pragma_database_list WHERE name = 'main'

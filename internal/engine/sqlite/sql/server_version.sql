SELECT 'SQLite ' || sqlite_version()

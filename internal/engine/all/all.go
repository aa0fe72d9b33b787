// Package all links every engine into a binary: importing it registers postgres://
// (and postgresql://), mysql:// and mariadb://, and sqlite:// (and sqlite3://).
package all

import (
	_ "github.com/storbench/storbench/internal/engine/mysql"    // MariaDB and MySQL
	_ "github.com/storbench/storbench/internal/engine/postgres" // PostgreSQL
	_ "github.com/storbench/storbench/internal/engine/sqlite"   // SQLite, embedded
)

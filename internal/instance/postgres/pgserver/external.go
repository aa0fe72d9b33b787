package pgserver

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// PasswordFile splits a DSN's password off into a libpq password file line, so
// that a client program (pg_basebackup) reads it from a file only its user can read,
// never from its command line, which every user of the host can see: it returns
// the DSN without its password, and the line (empty when the DSN has none).
func PasswordFile(dsn string) (conninfo, line string, err error) {
	d, err := dburl.Parse(dsn)
	if err != nil || (d.Scheme() != "postgres" && d.Scheme() != "postgresql") {
		return "", "", fmt.Errorf("not a PostgreSQL URL: %s", dburl.Redact(dsn))
	}
	u := d.Parts()
	if u.User == nil {
		return u.String(), "", nil
	}
	pw, has := u.User.Password()
	if !has {
		return u.String(), "", nil
	}
	user := u.User.Username()
	u.User = url.User(user)
	// Any host, port and database (a replication connection has none of its own).
	esc := strings.NewReplacer(`\`, `\\`, `:`, `\:`)
	return u.String(), "*:*:*:" + esc.Replace(user) + ":" + esc.Replace(pw), nil
}

// WithPassFile adds libpq's passfile parameter to a URL conninfo.
func WithPassFile(conninfo, file string) string {
	sep := "?"
	if strings.Contains(conninfo, "?") {
		sep = "&"
	}
	return conninfo + sep + "passfile=" + url.QueryEscape(file)
}

// BaseBackupFrom takes a physical backup of the PostgreSQL server at dsn (on any
// host: a server storbench does not manage) into dir, with pg_basebackup run here as
// this process's user, streaming the WAL it needs; the role needs REPLICATION.
func BaseBackupFrom(ctx context.Context, dsn, dir string) error {
	bin, err := BinDir()
	if err != nil {
		return err
	}
	conninfo, line, err := PasswordFile(dsn)
	if err != nil {
		return err
	}
	if line != "" {
		tmp, err := os.MkdirTemp("", "storbench-pgpass-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		file := filepath.Join(tmp, "pgpass")
		if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
			return err
		}
		conninfo = WithPassFile(conninfo, file)
	}
	// -w: never a password prompt, which would stall the study on a terminal.
	out, err := localserver.Run(ctx, nil, nil, nil, filepath.Join(bin, "pg_basebackup"),
		"-w", "-d", conninfo, "-D", dir, "-F", "p", "-X", "stream", "-c", "fast")
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.Join(strings.Fields(out), " "))
	}
	return nil
}

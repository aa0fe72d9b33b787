// Package dburl is a database URL (a DSN) parsed once: its scheme, the form safe to print
// and store, whether its server is on this host, and whether it carries a
// password. It is a leaf: engines, instances and studies share it instead of each
// parsing the same string again.
package dburl

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/storbench/storbench/internal/input"
)

// URL is a parsed database URL (a DSN). The zero value is no DSN.
type URL struct {
	raw string
	url *url.URL
}

// Parse reads a database URL; an error wraps input.ErrInvalid and shows the URL
// redacted.
func Parse(s string) (URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return URL{}, fmt.Errorf("%w: DSN %q is not a URL: use e.g. postgres://user@127.0.0.1:5432/tpcc", input.ErrInvalid, Redact(s))
	}
	return URL{raw: s, url: u}, nil
}

// String is the DSN as given, password included: for connecting, never for
// printing.
func (d URL) String() string { return d.raw }

// Scheme is the URL scheme, which names the engine (postgres, mysql, sqlite…).
func (d URL) Scheme() string {
	if d.url == nil {
		return ""
	}
	return d.url.Scheme
}

// Parts is a copy of the parsed URL, for an engine's own reading of its parts.
func (d URL) Parts() *url.URL {
	if d.url == nil {
		return &url.URL{}
	}
	c := *d.url
	if d.url.User != nil {
		u := *d.url.User
		c.User = &u
	}
	return &c
}

// Redacted is the DSN with any password replaced, safe to print and store.
func (d URL) Redacted() string {
	if d.url == nil {
		return Redact(d.raw)
	}
	return redactURL(d.Parts())
}

// HasPassword tells whether the DSN carries a password, in its user part or as a
// password parameter.
func (d URL) HasPassword() bool {
	if d.url == nil {
		return false
	}
	if d.url.User != nil {
		if _, has := d.url.User.Password(); has {
			return true
		}
	}
	return d.url.Query().Has("password")
}

// WithPassword is the DSN with its user's password set to pw (a DSN with no user
// is returned as it is).
func (d URL) WithPassword(pw string) URL {
	if d.url == nil || d.url.User == nil {
		return d
	}
	u := d.Parts()
	u.User = url.UserPassword(u.User.Username(), pw)
	return URL{raw: u.String(), url: u}
}

// Local tells whether the DSN's server is on this host (loopback, a Unix socket,
// or a file) and names its host.
func (d URL) Local() (host string, local bool) {
	if d.url == nil {
		return "", false
	}
	host = d.url.Hostname()
	if h := d.url.Query().Get("host"); h != "" {
		host = h
	}
	if host == "" || host == "localhost" || strings.HasPrefix(host, "/") {
		return host, true
	}
	ip := net.ParseIP(host)
	return host, ip != nil && ip.IsLoopback()
}

// Redact removes the password from a DSN string so it can be printed and stored;
// a string that is not a URL keeps only what follows its last "@".
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.LastIndex(s, "@"); i >= 0 {
			return "…" + s[i:]
		}
		return s
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

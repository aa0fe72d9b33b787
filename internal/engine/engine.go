// Package engine is the boundary between the engine-free workload (package tpcc, the
// driver) and a database: one small set of interfaces, one package per engine
// (postgres, mysql for MariaDB and MySQL, sqlite), chosen by the DSN's scheme.
package engine

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// Database is an open TPC-C database of one engine: what build, run and check need
// of it, as three small interfaces.
type Database interface {
	Builder
	Runner
	Checker
	Observer
	// Engine names the engine ("postgres").
	Engine() string
	// ServerVersion is the server's own version string.
	ServerVersion(ctx context.Context) (string, error)
	Close()
}

// Builder creates, loads and removes the schema.
type Builder interface {
	// ExistingTables lists the TPC-C tables and storbench's record tables present.
	ExistingTables(ctx context.Context) ([]string, error)
	// CreateTables creates the empty tables of that schema, without indexes or
	// constraints (but a key InnoDB clusters the table on), and ObjectsTable listing
	// them; FinishBuild enters there the routines it creates.
	CreateTables(ctx context.Context, s Schema) error
	// NewLoader opens one load connection; build uses several in parallel.
	NewLoader(ctx context.Context) (Loader, error)
	// FinishBuild creates indexes, constraints and stored procedures, records info,
	// and leaves the database ready to measure (statistics, hint bits, checkpoint).
	// Notes say what it skipped because this user may not do it (a checkpoint
	// without the privilege): the build is complete, the user should know.
	// s is the schema CreateTables made.
	FinishBuild(ctx context.Context, s Schema, info BuildInfo) (notes []string, err error)
	// Dropper removes what a build created (see Drop).
	Dropper
}

// Runner serves a run: sessions for the virtual users and the database's counters.
type Runner interface {
	// BuildInfo reads what FinishBuild recorded; ErrNoBuildInfo when the database was
	// built by another tool (its warehouse count is still given); ErrBuildUnfinished
	// when storbench's record table is there without a record.
	BuildInfo(ctx context.Context) (BuildInfo, error)
	// Modes are the modes the engine runs, its best first.
	Modes() []Mode
	// Connect opens one virtual user's session.
	Connect(ctx context.Context, mode Mode) (Session, error)
	// Counters reads the database's own throughput counters (HammerDB's view).
	Counters(ctx context.Context) (Counters, error)
	Classifier
}

// Classifier tells the driver what a transaction error means.
type Classifier interface {
	Classify(err error) Failure
}

// ConnectionLimiter is a Database whose server caps its connections (max_connections):
// the driver asks it before any user connects, so a run the server cannot hold is
// refused whole instead of failing half-way through connecting its users.
type ConnectionLimiter interface {
	ConnectionLimit(ctx context.Context) (ConnectionLimit, error)
}

// ConnectionLimit is how many connections this client may hold at once.
type ConnectionLimit struct {
	// Available: the server's limit minus the slots reserved from this role and the
	// connections of other clients; the Database's own open connections count as
	// available (they are part of what a run holds).
	Available int
	// Max is the server's max_connections, for the message.
	Max int
}

// StatementLimiter is a Database whose server caps the prepared statements all its
// sessions hold together (MariaDB's and MySQL's max_prepared_stmt_count): as with a
// ConnectionLimiter, the driver asks it before any user connects, so that the last
// users do not fail to prepare their statements after the others connected.
type StatementLimiter interface {
	StatementLimit(ctx context.Context, mode Mode) (StatementLimit, error)
}

// StatementLimit is how many more prepared statements the server allows, and how many
// one session of a mode prepares.
type StatementLimit struct {
	PerSession int // what one virtual user's session of the mode prepares
	Available  int // the server's limit minus the statements its sessions hold now
	Max        int // the server's max_prepared_stmt_count, for the message
}

// Checker runs one consistency query (tpcc.Check) and returns its violation count and
// the first violating keys, formatted.
type Checker interface {
	Check(ctx context.Context, query string) (violations int64, keys []string, err error)
}

// Loader streams text rows (tpcc.Generator's format) into one table.
type Loader interface {
	Load(ctx context.Context, table tpcc.Table, rows io.Reader) (int64, error)
	Close()
}

// Session is one virtual user's connection. Its methods run one whole transaction,
// committed, or rolled back where the spec says so.
type Session interface {
	// NewOrder reports rolledBack when the unused item made it roll back (2.4.2.3).
	NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (rolledBack bool, err error)
	Payment(ctx context.Context, in *tpcc.PaymentInput) error
	OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error
	// Delivery reports how many districts had no order to deliver (2.7.4.2).
	Delivery(ctx context.Context, in *tpcc.DeliveryInput) (skipped int, err error)
	// StockLevel returns the count of distinct low-stock items (2.8.2.2).
	StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error)
	Close()
}

// Mode is how transactions reach the server.
type Mode string

const (
	// Procedures runs each transaction as one call of a stored procedure created by
	// build: one round trip per transaction.
	Procedures Mode = "procedures"
	// SQL runs each transaction as client-side statements: the portable path.
	SQL Mode = "sql"
	// Best asks for the engine's best mode (its first of Modes): procedures where the
	// engine has them, sql otherwise. ResolveMode turns it into one of those.
	Best Mode = ""
)

// ParseMode validates a --mode value ("" is Best).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Procedures, SQL, Best:
		return Mode(s), nil
	}
	return "", input.Errorf("mode", "{mode} %q is unknown (use procedures, stored procedures as HammerDB does, or sql, statements sent by the client)", s)
}

// ResolveMode is the mode a run on db uses: the engine's best for Best, else the mode
// asked for, which the engine must run (bad input, refused before any user connects).
func ResolveMode(db interface {
	Engine() string
	Modes() []Mode
}, m Mode) (Mode, error) {
	if err := CheckMode(db.Engine(), m); err != nil {
		return "", err
	}
	if m == Best {
		return db.Modes()[0], nil
	}
	return m, nil
}

// CheckMode refuses a mode the engine a DSN scheme names cannot run; Best and an
// unregistered scheme (refused where it is opened) pass.
func CheckMode(scheme string, m Mode) error {
	modes := Modes(scheme)
	if m == Best || len(modes) == 0 || slices.Contains(modes, m) {
		return nil
	}
	return input.Errorf("mode", "%s has no %s mode (it runs %s): give {mode} %s, or leave {mode} out for the engine's best",
		registration(scheme).Schemes[0], m, modeList(modes), modes[0])
}

func modeList(modes []Mode) string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return strings.Join(names, " and ")
}

// BuildInfo is what a storbench build records in the database.
type BuildInfo struct {
	Warehouses int       `json:"warehouses"`
	Seed       uint64    `json:"seed"`
	CLoad      int       `json:"c_load"` // NURand C used for c_last at load (2.1.6.1)
	BuiltAt    time.Time `json:"built_at"`
	Version    string    `json:"storbench_version"`
	Schema     string    `json:"schema"` // Schema.Name
	// BuiltBy names the tool that built the database: BuiltByStorbench, BuiltByHammerDB
	// when an engine recognises HammerDB's routines beside tables without storbench's
	// record (CLoad and Schema are then HammerDB's), "" for a tool it does not know.
	BuiltBy string `json:"built_by"`
}

// The tools BuildInfo.BuiltBy names.
const (
	BuiltByStorbench = "storbench"
	BuiltByHammerDB  = "HammerDB"
)

// HammerDBBuild is what a HammerDB 4.12 build leaves that storbench needs to run on it:
// its loader draws c_last with C = 123 (pgoltp.tcl, NURand 255 0 999 123), and its
// schema is the hammerdb variant. The warehouse count is still counted.
func HammerDBBuild(warehouses int) BuildInfo {
	return BuildInfo{Warehouses: warehouses, CLoad: 123, Schema: HammerDBSchema, BuiltBy: BuiltByHammerDB}
}

// ErrNoBuildInfo: the tables exist but storbench did not build them.
var ErrNoBuildInfo = errors.New("no storbench build information in this database")

// ErrBuildUnfinished: storbench's build record table holds no record. Every storbench
// creates that table with the others and writes its one row last, once the data,
// keys and finishing are in: a build stopped before then (interrupted, failed) left
// part of a schema. Another tool's build has no such table (ErrNoBuildInfo).
var ErrBuildUnfinished = errors.New("storbench's build of this database did not finish: it holds no build record")

// Counters are a database's own cumulative counters, read at the edges of the timed
// window for the HammerDB-compatible throughput.
type Counters struct {
	// Transactions is commits + rollbacks of the benchmark database.
	Transactions int64
	// NextOrderIDs is sum(d_next_o_id): it grows by one per committed New-Order.
	NextOrderIDs int64
	At           time.Time
	// Where the two counters come from, for the result's labels.
	TransactionsSource, NewOrdersSource string
	// NoTransactionCounter: the engine keeps no count of its transactions (SQLite
	// has no server); the database view's TPM is then the client's count, and says so.
	NoTransactionCounter bool
	// Since is when the transaction counter started counting (the server's start),
	// where the engine can tell: two readings with different values straddle a reset.
	Since time.Time
}

// Observer tells package metrics what the database is doing and where it keeps it.
type Observer interface {
	// Activity reads the database's own cumulative activity counters.
	Activity(ctx context.Context) (Activity, error)
	// Storage names the directories the server keeps its data and its log (WAL) in,
	// as the server reports them (meaningful on the server's host only).
	Storage(ctx context.Context) (Storage, error)
}

// Activity are a database's cumulative counters of its work, for per-interval rates.
type Activity struct {
	Commits, Rollbacks    int64
	BlocksRead, BlocksHit int64 // buffer cache misses and hits, in blocks
	WALBytes              int64
	Checkpoints           int64 // requested and timed
	TempBytes             int64
	// Fsyncs are the engine's fsync calls, DataWriteBytes what it wrote to its data
	// files: the storage work of its commits and checkpoints (0 where the engine does
	// not count them; Source says which).
	Fsyncs, DataWriteBytes int64
	// Writes are what each role of the server handed to the OS to write, as the
	// server counts it (nil where it keeps no such count), in the same order at
	// every reading; Source says how each is counted.
	Writes []RoleWrite
	// Source names where the counters come from, for the result's labels.
	Source string
}

// RoleWrite is the bytes one role of a server wrote, by the server's own count.
type RoleWrite struct {
	Role  string
	Bytes int64
}

// roleWrites combines two readings' writes role by role with op; a reading whose
// roles differ (another server) gives none. A sum starts from none.
func roleWrites(a, b []RoleWrite, op func(x, y int64) int64) []RoleWrite {
	if a == nil {
		a = make([]RoleWrite, len(b))
		for i := range b {
			a[i].Role = b[i].Role
		}
	}
	if len(a) != len(b) {
		return nil
	}
	out := make([]RoleWrite, len(a))
	for i := range a {
		if a[i].Role != b[i].Role {
			return nil
		}
		out[i] = RoleWrite{a[i].Role, op(a[i].Bytes, b[i].Bytes)}
	}
	return out
}

// Minus is the change from an earlier reading.
func (a Activity) Minus(b Activity) Activity {
	return Activity{Commits: a.Commits - b.Commits, Rollbacks: a.Rollbacks - b.Rollbacks,
		BlocksRead: a.BlocksRead - b.BlocksRead, BlocksHit: a.BlocksHit - b.BlocksHit,
		WALBytes: a.WALBytes - b.WALBytes, Checkpoints: a.Checkpoints - b.Checkpoints,
		TempBytes: a.TempBytes - b.TempBytes, Fsyncs: a.Fsyncs - b.Fsyncs, DataWriteBytes: a.DataWriteBytes - b.DataWriteBytes,
		Writes: roleWrites(a.Writes, b.Writes, func(x, y int64) int64 { return x - y }), Source: a.Source}
}

// Plus adds another interval's change.
func (a Activity) Plus(b Activity) Activity {
	return Activity{Commits: a.Commits + b.Commits, Rollbacks: a.Rollbacks + b.Rollbacks,
		BlocksRead: a.BlocksRead + b.BlocksRead, BlocksHit: a.BlocksHit + b.BlocksHit,
		WALBytes: a.WALBytes + b.WALBytes, Checkpoints: a.Checkpoints + b.Checkpoints,
		TempBytes: a.TempBytes + b.TempBytes, Fsyncs: a.Fsyncs + b.Fsyncs, DataWriteBytes: a.DataWriteBytes + b.DataWriteBytes,
		Writes: roleWrites(a.Writes, b.Writes, func(x, y int64) int64 { return x + y }), Source: a.Source}
}

// Storage is where a server keeps its files.
type Storage struct {
	Data string // data directory
	WAL  string // write-ahead log directory, as the server names it (may be a symlink)
}

// Failure is what a transaction error means to the driver.
type Failure struct {
	// Retry: a serialization failure or deadlock; the driver runs the transaction again.
	Retry bool
	// Kind names the error for per-type counts (an SQLSTATE, "connection", …).
	Kind string
	// Lost: the session is unusable and must be reconnected.
	Lost bool
	// DiskFull: the storage under the database ran out of space.
	DiskFull bool
}

// Opener opens a database from a DSN whose scheme selected the engine.
type Opener func(ctx context.Context, dsn string, mode OpenMode) (Database, error)

// OpenMode says whether opening may create the database.
type OpenMode int

const (
	// Existing opens a database that exists: one that does not is bad input, not a
	// new empty database to run or check against.
	Existing OpenMode = iota
	// MayCreate lets an engine whose database is a file (SQLite) create it, for build.
	MayCreate
)

// Registration is everything an engine makes known, once, from its package's init
// (package engine/all links every engine).
type Registration struct {
	// Schemes are its DSN schemes, its own name first (the name messages use).
	Schemes []string
	Open    Opener
	// Footprint is what a build takes on disk (measured): a build its storage cannot
	// hold is refused before it starts.
	Footprint Footprint
	// Modes are the modes it runs, its best first: a mode it cannot run is refused
	// before anything connects (a study's, before the study starts).
	Modes []Mode
	// Roles tell its server's processes apart, for I/O by role; nil for an engine
	// whose server is not a process of its own (SQLite).
	Roles ProcessRoles
}

// registered holds each scheme's registration.
var registered = map[string]*Registration{}

// Register makes an engine available under its DSN schemes.
func Register(r Registration) {
	for _, s := range r.Schemes {
		registered[s] = &r
	}
}

// registration is the engine a DSN scheme (or Database.Engine's name, or an
// instance's engine name) names; nil when none is registered.
func registration(scheme string) *Registration { return registered[strings.ToLower(scheme)] }

// Modes are the modes the engine a DSN scheme (or Database.Engine's name) names can
// run, its best first; nil when none is registered.
func Modes(scheme string) []Mode {
	if r := registration(scheme); r != nil {
		return r.Modes
	}
	return nil
}

// SameEngine tells whether two DSN schemes name one registered engine
// (postgres:// and postgresql://, mysql:// and mariadb://).
func SameEngine(a, b string) bool {
	canon := func(s string) string {
		if r := registration(s); r != nil {
			return r.Schemes[0]
		}
		return strings.ToLower(s) // an engine this binary did not link names only itself
	}
	return canon(a) == canon(b)
}

// Footprint is what a build takes on the storage, as each engine measured it: the
// built database's files, and the log (write-ahead log, binary log) the build writes
// meanwhile, at its peak, which may be on a filesystem of its own.
type Footprint struct {
	// The database's files: DataFixed (the item table, what a server adds once) and
	// DataPerWarehouse for each warehouse.
	DataFixed, DataPerWarehouse int64
	// The log the build writes: LogFixed and LogPerWarehouse, until it passes LogFull,
	// from where it takes LogMax whatever the warehouses (PostgreSQL checkpoints then,
	// keeps the segments it frees for reuse, up to max_wal_size, and writes no more).
	// LogMax 0: the log grows with the build (a binary log).
	LogFixed, LogPerWarehouse int64
	LogFull, LogMax           int64
}

// Data is what the built database of that many warehouses takes.
func (f Footprint) Data(warehouses int) int64 {
	return f.DataFixed + f.DataPerWarehouse*int64(warehouses)
}

// Log is the log a build of that many warehouses leaves at its peak.
func (f Footprint) Log(warehouses int) int64 {
	l := f.LogFixed + f.LogPerWarehouse*int64(warehouses)
	if f.LogMax > 0 && l > f.LogFull {
		return f.LogMax
	}
	return l
}

// RegisteredFootprint is what a build of the engine a DSN scheme (or
// Database.Engine's name) names takes on a server set up as storbench's managed
// instances are; zero when none is registered.
func RegisteredFootprint(scheme string) Footprint {
	if r := registration(scheme); r != nil {
		return r.Footprint
	}
	return Footprint{}
}

// FootprintReader is a Database whose build's log depends on the server's settings
// (PostgreSQL's max_wal_size, MariaDB's binary log on or off).
type FootprintReader interface {
	Footprint(ctx context.Context) (Footprint, error)
}

// BuildFootprint is what a build into db takes: as its server's settings say, where
// the engine reads them, else the registered figure.
func BuildFootprint(ctx context.Context, db Database) (Footprint, error) {
	if r, ok := db.(FootprintReader); ok {
		return r.Footprint(ctx)
	}
	return RegisteredFootprint(db.Engine()), nil
}

// Open opens the database a DSN names, which must exist.
func Open(ctx context.Context, dsn string) (Database, error) {
	u, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, u, Existing)
}

// OpenURL opens the database of a DSN parsed once by ParseDSN, which must exist.
func OpenURL(ctx context.Context, u dburl.URL) (Database, error) {
	return open(ctx, u, Existing)
}

// OpenOrCreate opens the database a DSN names, creating it if its engine can: what
// build needs.
func OpenOrCreate(ctx context.Context, dsn string) (Database, error) {
	u, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, u, MayCreate)
}

// OpenOrCreateURL is OpenOrCreate for a DSN parsed once by ParseDSN.
func OpenOrCreateURL(ctx context.Context, u dburl.URL) (Database, error) {
	return open(ctx, u, MayCreate)
}

// ParseDSN parses a --dsn once for everything that follows (opening, watching its
// storage, its redacted form in the result).
func ParseDSN(dsn string) (dburl.URL, error) {
	if dsn == "" {
		return dburl.URL{}, input.Errorf("dsn", "{dsn} is required, e.g. {dsn} postgres://postgres@127.0.0.1:5432/tpcc")
	}
	u, err := dburl.Parse(dsn)
	if err != nil {
		return u, input.Errorf("dsn", "{dsn} %q is not a URL: use e.g. postgres://user@127.0.0.1:5432/tpcc", dburl.Redact(dsn))
	}
	return u, nil
}

func open(ctx context.Context, u dburl.URL, mode OpenMode) (Database, error) {
	r, ok := registered[u.Scheme()]
	if !ok {
		var known []string
		for s := range registered {
			known = append(known, s+"://")
		}
		sort.Strings(known)
		return nil, input.Errorf("dsn", "{dsn} scheme %q is not supported: use %s", u.Scheme(), strings.Join(known, " or "))
	}
	return r.Open(ctx, u.String(), mode)
}

package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/input"
)

// The procedures mode talks the PostgreSQL wire protocol itself, because at a few
// thousand calls per second the client's CPU per call is part of what a run measures.
// Client CPU per transaction of a 4-user run on a 2-core VM: ~75-90 µs through pgx,
// ~26 µs here, most of it now the kernel's (loopback TCP, waking the server, sleeping
// and waking between replies: bench/wirefloor measures that floor). pgx's and pgconn's layers (type map, statement cache,
// result readers) cost ~15 µs per call; here a call is one Bind (named statement,
// binary parameters) + Execute + Sync in one write, and the reply is read through
// ReadyForQuery into a few integers. The socket's reads and writes are raw syscalls
// (package rawconn), as for every connection of this engine.
//
// pgconn still connects (authentication, TLS negotiation, parameters) and prepares the
// statements; then the connection is hijacked.

// statement is a prepared statement of a wire connection: its parameter types fix its
// arguments' binary encoding, and results says what its result columns are.
type statement struct {
	name   string   // the server-side prepared statement
	sql    string   // its text, with $1…$n
	params []uint32 // parameter type OIDs, prepared explicitly (the encoders must match); 0: the server infers a text type
	// results has a letter per result column: i, an integer (int4 or int8) the
	// client decodes; t, a text it decodes; -, a value it reads and ignores.
	results string
}

const (
	// maxColumns bounds a procedures call's result row (call decodes it into row).
	maxColumns = 3
	// maxMessage bounds one server message: a larger length means the stream is corrupt.
	maxMessage = 1 << 24
)

// wireConn is one hijacked connection. It is not safe for concurrent calls: a session
// belongs to one virtual user's goroutine.
type wireConn struct {
	nc net.Conn // a rawconn.Conn, or TLS over one

	wbuf []byte // the request being built, reused
	rbuf []byte // received bytes; rbuf[rpos:rlen] are not parsed yet
	rpos int
	rlen int

	// row is the last call's result row.
	row [maxColumns]int64

	// cols are the columns of the row being decoded: views into rowBuf, or into rbuf.
	cols   [][]byte
	rowBuf []byte

	// txStatus is the server's transaction status at the last ReadyForQuery: I idle,
	// T in a transaction, E in a failed transaction.
	txStatus byte
	reply    reply // the reply being read, reused (batch.go)

	// Cancellation: watched is the Done channel of the context whose cancellation
	// interrupts the I/O (by a past deadline), unwatch stops that. The driver passes one
	// context for a whole run, so this is registered once, not per call. No
	// CancelRequest is sent: a cancelled call closes the socket, and the server aborts
	// the statement when it notices the closed connection (a call that completes
	// before the server notices may still commit).
	watched <-chan struct{}
	unwatch func() bool

	// broken is set (by end) once the connection is unusable; every call then returns
	// it. It always wraps errConnLost.
	broken error
}

// dialWire connects with cfg, prepares the statements and takes the socket over.
func dialWire(ctx context.Context, cfg *pgx.ConnConfig, stmts []*statement) (*wireConn, error) {
	pc, err := pgconn.ConnectConfig(ctx, &cfg.Copy().Config)
	if err != nil {
		return nil, err
	}
	for _, st := range stmts {
		if err := prepare(ctx, pc, st); err != nil {
			pc.Close(ctx)
			return nil, err
		}
	}
	// Nothing may stay buffered in pgconn, nor its background reader run.
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(ctx)
		return nil, err
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, err
	}
	return &wireConn{nc: hc.Conn, wbuf: make([]byte, 0, 1024), rbuf: make([]byte, 8192), txStatus: 'I'}, nil
}

// otherVersion is the fix for a database whose functions do not match these calls,
// the end of an input.Errorf format.
const otherVersion = "the database's functions come from another storbench version; rebuild it (storbench drop, then build) or use {mode} sql"

// prepare prepares st and checks that its results are what call decodes.
func prepare(ctx context.Context, pc *pgconn.PgConn, st *statement) error {
	sd, err := pc.Prepare(ctx, st.name, st.sql, st.params)
	// A function created by another storbench version has other result columns
	// (42703 undefined_column) or arguments (42883 undefined_function).
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && (pgErr.Code == "42703" || pgErr.Code == "42883") {
		return input.Errorf("mode", "prepare %s: %s: "+otherVersion, st.name, pgErr.Message)
	}
	if err != nil {
		return fmt.Errorf("prepare %s: %w", st.name, err)
	}
	if len(sd.Fields) != len(st.results) {
		return input.Errorf("mode", "prepare %s: %d result columns, want %d: "+otherVersion, st.name, len(sd.Fields), len(st.results))
	}
	for i, f := range sd.Fields {
		switch oid := f.DataTypeOID; st.results[i] {
		case 'i':
			if oid != pgtype.Int4OID && oid != pgtype.Int8OID {
				return fmt.Errorf("prepare %s: result column %s has type OID %d, want integer or bigint", st.name, f.Name, oid)
			}
		case 't':
			if oid != pgtype.TextOID && oid != pgtype.VarcharOID && oid != pgtype.BPCharOID {
				return fmt.Errorf("prepare %s: result column %s has type OID %d, want a text type", st.name, f.Name, oid)
			}
		}
	}
	return nil
}

// bind starts a call of st in the reused write buffer. The caller appends one value per
// parameter, in order, with the append functions below, and passes the result to call.
func (c *wireConn) bind(st *statement) []byte { return appendBindStart(c.wbuf[:0], st) }

// A request is, per statement, a Bind message (appendBindStart, the parameter values,
// appendBindEnd) and an Execute, then one Sync.

// appendBindStart appends the Bind message of st up to its parameter values: unnamed
// portal, every parameter in binary.
func appendBindStart(b []byte, st *statement) []byte {
	b = append(b, 'B', 0, 0, 0, 0, 0) // length (set by appendRequestEnd), portal ""
	b = append(b, st.name...)
	b = append(b, 0, 0, 1, 0, 1) // one parameter format code: binary
	return binary.BigEndian.AppendUint16(b, uint16(len(st.params)))
}

// executeMsg is Execute (unnamed portal, all rows); syncMsg is Sync.
var (
	executeMsg = []byte{'E', 0, 0, 0, 9, 0, 0, 0, 0, 0}
	syncMsg    = []byte{'S', 0, 0, 0, 4}
)

// appendBindEnd ends the Bind message that starts at b[start] (binary results) and
// appends Execute.
func appendBindEnd(b []byte, start int) []byte {
	b = append(b, 0, 1, 0, 1) // one result format code: binary
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-1))
	return append(b, executeMsg...)
}

// appendRequestEnd ends the Bind message that starts b and appends Execute and Sync:
// the whole request of one statement.
func appendRequestEnd(b []byte) []byte { return append(appendBindEnd(b, 0), syncMsg...) }

// Parameter values in binary format, each preceded by its length.

func appendInt4(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(append(b, 0, 0, 0, 4), uint32(v))
}

func appendInt8(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0, 0, 0, 8), uint64(v))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0, 0, 0, 1, 1)
	}
	return append(b, 0, 0, 0, 1, 0)
}

func appendText(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
}

// appendInt4Array appends a one-dimensional integer[] without NULLs, lower bound 1.
func appendInt4Array(b []byte, vs []int32) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(20+8*len(vs)))
	b = binary.BigEndian.AppendUint32(b, 1)              // dimensions
	b = binary.BigEndian.AppendUint32(b, 0)              // has NULLs
	b = binary.BigEndian.AppendUint32(b, pgtype.Int4OID) // element type
	b = binary.BigEndian.AppendUint32(b, uint32(len(vs)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for _, v := range vs {
		b = appendInt4(b, v)
	}
	return b
}

// call runs st with the parameters in b (bind(st) plus the values), sending the request
// in one write and reading the reply through ReadyForQuery; the result row lands in
// c.row. An ERROR from the server returns as its *pgconn.PgError, and a reply without
// exactly one well-formed row as a plain error; the connection stays usable after
// both. Any other failure (I/O, a corrupt stream, a FATAL error, ctx's cancellation
// interrupting the call) ends the connection: this and every later call return an
// error wrapping errConnLost (and the server's error, or ctx's, where there is one).
// A ctx already done before the call returns ctx's error and leaves the connection be.
func (c *wireConn) call(ctx context.Context, st *statement, b []byte) error {
	c.wbuf = appendRequestEnd(b)
	if err := ctx.Err(); err != nil {
		return err
	}
	c.watch(ctx)
	if c.broken != nil {
		return c.broken
	}
	if err := c.transmit(c.wbuf); err != nil {
		return c.fail(ctx, err)
	}
	var result error // returned at ReadyForQuery: the reply is read whole either way
	rows := 0
	for {
		typ, body, err := c.receive()
		if err != nil {
			return c.fail(ctx, err)
		}
		switch typ {
		case 'D': // DataRow
			rows++
			if result == nil {
				result = c.decodeRow(st, body)
			}
		case 'E': // ErrorResponse
			var msg pgproto3.ErrorResponse
			if err := msg.Decode(body); err != nil {
				return c.fail(ctx, err)
			}
			pgErr := pgconn.ErrorResponseToPgError(&msg)
			if isFatal(pgErr) {
				// The server closes the connection: no ReadyForQuery follows.
				c.end(fmt.Errorf("%w: closed by the server: %v", errConnLost, pgErr))
				return fmt.Errorf("%w: %w", errConnLost, pgErr)
			}
			result = pgErr
		case 'Z': // ReadyForQuery
			c.txStatus = readyStatus(body)
			if result == nil && rows != 1 {
				result = fmt.Errorf("%s returned %d rows, want 1", st.name, rows)
			}
			return result
		case '2', 'C', 'N', 'S', 'A':
			// BindComplete, CommandComplete; NoticeResponse, ParameterStatus and
			// NotificationResponse may come at any time and mean nothing here.
		default:
			return c.fail(ctx, fmt.Errorf("unexpected message type %q", typ))
		}
	}
}

// decodeRow decodes a DataRow of st's integer columns into c.row.
func (c *wireConn) decodeRow(st *statement, body []byte) error {
	if len(st.results) > maxColumns {
		return fmt.Errorf("%s: %d result columns, at most %d", st.name, len(st.results), maxColumns)
	}
	if err := c.splitRow(st, body); err != nil {
		return err
	}
	for i := range c.cols {
		v, err := columnInt(c.cols[i])
		if err != nil {
			return fmt.Errorf("%s: result column %d: %w", st.name, i+1, err)
		}
		c.row[i] = v
	}
	return nil
}

// splitRow sets c.cols to the columns of a DataRow of st (views into body; nil for a
// NULL), checking that they are st's and that the message holds them.
func (c *wireConn) splitRow(st *statement, body []byte) error {
	if len(body) < 2 || int(binary.BigEndian.Uint16(body)) != len(st.results) {
		return fmt.Errorf("%s: malformed result row", st.name)
	}
	c.cols = c.cols[:0]
	p := 2
	for range len(st.results) {
		if len(body) < p+4 {
			return fmt.Errorf("%s: malformed result row", st.name)
		}
		size := int(int32(binary.BigEndian.Uint32(body[p:])))
		p += 4
		if size < 0 {
			c.cols = append(c.cols, nil)
			continue
		}
		if len(body) < p+size {
			return fmt.Errorf("%s: malformed result row", st.name)
		}
		c.cols = append(c.cols, body[p:p+size:p+size])
		p += size
	}
	return nil
}

// columnInt decodes a binary int4 or int8 column.
func columnInt(v []byte) (int64, error) {
	switch {
	case v == nil:
		return 0, errors.New("NULL")
	case len(v) == 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	case len(v) == 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	return 0, fmt.Errorf("%d bytes, not an integer", len(v))
}

// readyStatus is the transaction status a ReadyForQuery body carries.
func readyStatus(body []byte) byte {
	if len(body) != 1 {
		return 0
	}
	return body[0]
}

// receive returns the next message's type and body, reading as needed. The body is only
// valid until the next receive.
func (c *wireConn) receive() (byte, []byte, error) {
	for {
		need := 5 // type and length
		if c.rlen-c.rpos >= 5 {
			size := int(binary.BigEndian.Uint32(c.rbuf[c.rpos+1:]))
			if size < 4 || size > maxMessage {
				return 0, nil, fmt.Errorf("malformed message length %d", size)
			}
			need = 1 + size
			if c.rlen-c.rpos >= need {
				typ, body := c.rbuf[c.rpos], c.rbuf[c.rpos+5:c.rpos+need]
				c.rpos += need
				return typ, body, nil
			}
		}
		c.makeRoom(need)
		if err := c.fill(); err != nil {
			return 0, nil, err
		}
	}
}

// makeRoom moves the unparsed bytes to the front of rbuf, growing it if it cannot
// hold need bytes.
func (c *wireConn) makeRoom(need int) {
	buf := c.rbuf
	if need > len(buf) {
		buf = make([]byte, need)
	}
	c.rlen = copy(buf, c.rbuf[c.rpos:c.rlen])
	c.rbuf, c.rpos = buf, 0
}

// exchanger sends a request and reads the first bytes of its reply in one wait
// (rawconn.Conn; not a TLS connection over one).
type exchanger interface {
	Exchange(req, b []byte) (int, error)
}

var _ exchanger = (*rawconn.Conn)(nil)

// transmit writes the request req whole and, where the connection can exchange, reads
// the reply's first bytes into rbuf in the same wait: one read(2) fewer per call.
func (c *wireConn) transmit(req []byte) error {
	ex, ok := c.nc.(exchanger)
	if !ok {
		return c.write(req)
	}
	c.makeRoom(c.rlen - c.rpos + 1)
	n, err := ex.Exchange(req, c.rbuf[c.rlen:])
	c.rlen += n
	if n > 0 {
		return nil
	}
	return err
}

// fill reads what the server sent into rbuf[rlen:], waiting for at least one byte.
func (c *wireConn) fill() error {
	n, err := c.nc.Read(c.rbuf[c.rlen:])
	c.rlen += n
	if n > 0 {
		return nil
	}
	return err
}

// write writes b whole.
func (c *wireConn) write(b []byte) error {
	_, err := c.nc.Write(b)
	return err
}

// watch makes ctx's cancellation interrupt the connection's I/O.
func (c *wireConn) watch(ctx context.Context) {
	done := ctx.Done()
	if done == c.watched {
		return
	}
	if c.unwatch != nil && !c.unwatch() && c.broken == nil {
		// The previous context was canceled: its past deadline may be set, or about to be.
		c.end(fmt.Errorf("%w: interrupted by a canceled context", errConnLost))
	}
	c.watched, c.unwatch = done, nil
	if done != nil {
		c.unwatch = context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	}
}

// fail ends the connection after an I/O or protocol error and returns the call's error:
// ctx's error, wrapped with errConnLost, when ctx's cancellation interrupted the I/O.
func (c *wireConn) fail(ctx context.Context, err error) error {
	c.end(fmt.Errorf("%w: %w", errConnLost, err))
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: call interrupted: %w", errConnLost, ctxErr)
	}
	return c.broken
}

// end marks the connection unusable with broken (which wraps errConnLost) and closes
// the socket: the server sees the connection end, and aborts what it still runs.
// broken is what every later call returns: a server error that closed the connection
// is in it as text only, so that Classify counts that error once (the call it
// answered) and the later calls as a lost connection.
func (c *wireConn) end(broken error) {
	c.broken = broken
	c.nc.Close()
}

// terminate is the Terminate message: a polite goodbye, so that the server logs no
// unexpected EOF.
var terminate = []byte{'X', 0, 0, 0, 4}

// Close ends the connection.
func (c *wireConn) Close() {
	if c.unwatch != nil {
		c.unwatch()
	}
	if c.broken == nil {
		c.write(terminate)
		c.end(fmt.Errorf("%w: %w", errConnLost, net.ErrClosed))
	}
}

package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/tpcc"
)

// TestRequestEncoding compares the encoders' requests with pgproto3's messages holding
// pgx's own binary encoding of the same values.
func TestRequestEncoding(t *testing.T) {
	m := pgtype.NewMap()
	tests := []struct {
		st     *statement
		params func(b []byte) []byte
		values []any
	}{{
		st: &paymentStmt,
		params: func(b []byte) []byte {
			b = appendInt4(b, 1)
			b = appendInt4(b, 10)
			b = appendInt4(b, 2)
			b = appendInt4(b, -3)
			b = appendInt4(b, 0)
			b = appendBool(b, true)
			b = appendText(b, "BARÉSEPRI")
			return appendInt8(b, -500000000001)
		},
		values: []any{int32(1), int32(10), int32(2), int32(-3), int32(0), true, "BARÉSEPRI", int64(-500000000001)},
	}, {
		st: &orderStatusStmt,
		params: func(b []byte) []byte {
			b = appendInt4(b, 4)
			b = appendInt4(b, 7)
			b = appendInt4(b, 2999)
			b = appendBool(b, false)
			return appendText(b, "")
		},
		values: []any{int32(4), int32(7), int32(2999), false, ""},
	}, {
		st: &newOrderStmt,
		params: func(b []byte) []byte {
			b = appendInt4(b, 1)
			b = appendInt4(b, 3)
			b = appendInt4(b, 42)
			b = appendInt4Array(b, []int32{500, 77, 100000, -1})
			b = appendInt4Array(b, []int32{1, 2, 1, 1})
			return appendInt4Array(b, []int32{3, 10, 7, 1})
		},
		values: []any{int32(1), int32(3), int32(42), []int32{500, 77, 100000, -1}, []int32{1, 2, 1, 1}, []int32{3, 10, 7, 1}},
	}}
	for _, tt := range tests {
		got := appendRequestEnd(tt.params(appendBindStart(nil, tt.st)))

		bind := pgproto3.Bind{PreparedStatement: tt.st.name, ParameterFormatCodes: []int16{pgtype.BinaryFormatCode},
			ResultFormatCodes: []int16{pgtype.BinaryFormatCode}}
		for i, v := range tt.values {
			// A non-nil buffer: nil would mean NULL, for the empty text too.
			p, err := m.Encode(tt.st.params[i], pgtype.BinaryFormatCode, v, []byte{})
			if err != nil {
				t.Fatalf("%s: encode %v: %v", tt.st.name, v, err)
			}
			bind.Parameters = append(bind.Parameters, p)
		}
		want := encode(t, &bind, &pgproto3.Execute{}, &pgproto3.Sync{})
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", tt.st.name, got, want)
		}
	}
}

type encoder interface{ Encode([]byte) ([]byte, error) }

// encode concatenates messages encoded by pgproto3.
func encode(t *testing.T, msgs ...encoder) []byte {
	t.Helper()
	var b []byte
	for _, msg := range msgs {
		var err error
		if b, err = msg.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestDecodeRow(t *testing.T) {
	int4 := func(v int32) []byte { return appendInt4(nil, v)[4:] }
	int8 := func(v int64) []byte { return appendInt8(nil, v)[4:] }
	row := func(values ...[]byte) []byte { return encode(t, &pgproto3.DataRow{Values: values})[5:] }
	whole := row(int4(1), int8(2))
	tests := []struct {
		body []byte
		want []int64 // nil: an error
	}{
		{row(int4(-7), int8(1<<40)), []int64{-7, 1 << 40}},
		{row(int8(-1), int4(2147483647)), []int64{-1, 2147483647}},
		{row(int4(1), nil), nil},              // NULL
		{row(int4(1)), nil},                   // too few columns
		{row(int4(1), int4(2), int4(3)), nil}, // too many
		{row(int4(1), []byte{0, 1}), nil},     // an int2
		{row(int4(1), append(int8(2), 0)), nil},
		{whole[:len(whole)-1], nil}, // a value longer than the message
		{whole[:7], nil},            // a length cut off
	}
	twoColumns := statement{name: "two_columns", results: "ii"}
	for i, tt := range tests {
		var c wireConn
		err := c.decodeRow(&twoColumns, tt.body)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("row %d %x: no error", i, tt.body)
		case tt.want != nil && err != nil:
			t.Errorf("row %d %x: %v", i, tt.body, err)
		case tt.want != nil && (c.row[0] != tt.want[0] || c.row[1] != tt.want[1]):
			t.Errorf("row %d: %v, want %v", i, c.row[:2], tt.want)
		}
	}
}

// pipeConn is a wireConn on one end of a pipe, with a read buffer small enough to make
// it grow, and a fake server on the other end.
func pipeConn(t *testing.T) (*wireConn, *fakeServer) {
	client, server := net.Pipe()
	c := &wireConn{nc: client, rbuf: make([]byte, 8)}
	t.Cleanup(c.Close)
	t.Cleanup(func() { server.Close() })
	return c, &fakeServer{t: t, conn: server}
}

type fakeServer struct {
	t    *testing.T
	conn net.Conn
}

// reply reads a request of n bytes and answers with msgs, three bytes per write so
// that the client's reads end anywhere in a message. Close after the messages closes
// the connection.
func (s *fakeServer) reply(n int, close bool, msgs ...encoder) {
	out := encode(s.t, msgs...)
	go func() {
		if _, err := io.ReadFull(s.conn, make([]byte, n)); err != nil {
			return
		}
		for len(out) > 0 {
			k := min(3, len(out))
			if _, err := s.conn.Write(out[:k]); err != nil {
				return
			}
			out = out[k:]
		}
		if close {
			s.conn.Close()
		}
	}()
}

// TestWireProtocol runs calls against a fake server: replies in pieces, messages to
// ignore, server errors that leave the connection usable, and the ends of a connection.
func TestWireProtocol(t *testing.T) {
	ctx := t.Context()
	db := &DB{}
	c, srv := pipeConn(t)
	call := func() error {
		b := c.bind(&deliveryStmt)
		b = appendInt4(b, 1)
		b = appendInt4(b, 5)
		return c.call(ctx, &deliveryStmt, b)
	}
	n := len(appendRequestEnd(appendInt4(appendInt4(appendBindStart(nil, &deliveryStmt), 1), 5)))
	ready := &pgproto3.ReadyForQuery{TxStatus: 'I'}
	row := func(v int64) encoder { return &pgproto3.DataRow{Values: [][]byte{appendInt8(nil, v)[4:]}} }
	long := strings.Repeat("x", 100) // longer than the read buffer
	serverErr := func(severity, code string) encoder {
		return &pgproto3.ErrorResponse{Severity: severity, SeverityUnlocalized: severity, Code: code, Message: long}
	}

	srv.reply(n, false, &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: long},
		&pgproto3.BindComplete{}, row(1<<33), &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")},
		&pgproto3.ParameterStatus{Name: "TimeZone", Value: "UTC"}, ready)
	if err := call(); err != nil || c.row[0] != 1<<33 {
		t.Fatalf("call = %v, row %d; want nil, %d", err, c.row[0], int64(1<<33))
	}

	srv.reply(n, false, &pgproto3.BindComplete{}, serverErr("ERROR", errUnusedItem), ready)
	err := call()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != errUnusedItem || pgErr.Message != long {
		t.Fatalf("call = %v; want the server's error %s", err, errUnusedItem)
	}
	if f := db.Classify(err); f.Lost || f.Kind != errUnusedItem {
		t.Errorf("Classify(%v) = %+v", err, f)
	}

	// Replies the client finds wrong, over a connection that stays usable: not lost.
	srv.reply(n, false, &pgproto3.BindComplete{}, &pgproto3.DataRow{Values: [][]byte{nil}}, ready)
	if err := call(); err == nil {
		t.Error("a NULL result gave no error")
	} else if f := db.Classify(err); f != (engine.Failure{Kind: "client"}) {
		t.Errorf("Classify(%v) = %+v, want kind client", err, f)
	}
	srv.reply(n, false, &pgproto3.BindComplete{}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 0")}, ready)
	if err := call(); err == nil {
		t.Error("no result row gave no error")
	} else if f := db.Classify(err); f != (engine.Failure{Kind: "client"}) {
		t.Errorf("Classify(%v) = %+v, want kind client", err, f)
	}

	srv.reply(n, false, &pgproto3.BindComplete{}, row(-2), &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, ready)
	if err := call(); err != nil || c.row[0] != -2 {
		t.Fatalf("call after errors = %v, row %d; want nil, -2", err, c.row[0])
	}

	// A fatal error, of a code that does not say so itself: the server closes the
	// connection.
	srv.reply(n, true, serverErr("FATAL", "XX000"))
	if err := call(); !errors.As(err, &pgErr) || pgErr.Code != "XX000" || db.Classify(err) != (engine.Failure{Kind: "XX000", Lost: true}) {
		t.Fatalf("call = %v (%+v); want the server's error XX000, lost", err, db.Classify(err))
	}
	if err := call(); err == nil || db.Classify(err) != (engine.Failure{Kind: "connection", Lost: true}) {
		t.Errorf("call after a fatal error = %v (%+v); want a lost connection", err, db.Classify(err))
	}

	// The connection ends in the middle of a reply.
	c, srv = pipeConn(t)
	srv.reply(n, true, &pgproto3.BindComplete{})
	if err := call(); !errors.Is(err, io.EOF) || db.Classify(err) != (engine.Failure{Kind: "connection", Lost: true}) {
		t.Errorf("call = %v (%+v); want EOF, lost", err, db.Classify(err))
	}
	// A corrupt stream.
	c, srv = pipeConn(t)
	srv.reply(n, false, encoderFunc([]byte{'D', 0xff, 0, 0, 0}))
	if err := call(); err == nil || !db.Classify(err).Lost {
		t.Errorf("call = %v (%+v); want a lost connection", err, db.Classify(err))
	}
}

// TestClassify: what each kind of error means to the driver.
func TestClassify(t *testing.T) {
	db := &DB{}
	pgErr := func(severity, code string) error {
		return fmt.Errorf("payment: %w", &pgconn.PgError{Severity: severity, SeverityUnlocalized: severity, Code: code})
	}
	lost := func(err error) error { return fmt.Errorf("%w: %w", errConnLost, err) }
	tests := []struct {
		err  error
		want engine.Failure
	}{
		{pgErr("ERROR", "40001"), engine.Failure{Retry: true, Kind: "40001"}},
		{pgErr("ERROR", "40P01"), engine.Failure{Retry: true, Kind: "40P01"}},
		{pgErr("ERROR", "23505"), engine.Failure{Kind: "23505"}},
		{pgErr("ERROR", "57014"), engine.Failure{Kind: "57014"}}, // statement timeout: the session lives
		{pgErr("FATAL", "57P01"), engine.Failure{Kind: "57P01", Lost: true}},
		{pgErr("FATAL", "XX000"), engine.Failure{Kind: "XX000", Lost: true}},
		{pgErr("PANIC", "XX000"), engine.Failure{Kind: "XX000", Lost: true}},
		{pgErr("ERROR", "57P04"), engine.Failure{Kind: "57P04", Lost: true}},
		{pgErr("ERROR", "08006"), engine.Failure{Kind: "08006", Lost: true}},
		{&pgconn.PgError{Severity: "FATAL", Code: "XX000"}, engine.Failure{Kind: "XX000", Lost: true}}, // no unlocalized severity
		{lost(pgErr("ERROR", "XX000")), engine.Failure{Kind: "XX000", Lost: true}},
		{fmt.Errorf("customer: %w", pgx.ErrNoRows), engine.Failure{Kind: "client"}},
		{errors.New("storbench_payment returned 0 rows, want 1"), engine.Failure{Kind: "client"}},
		{lost(io.EOF), engine.Failure{Kind: "connection", Lost: true}},
		{context.Canceled, engine.Failure{Kind: "canceled"}},
		{fmt.Errorf("batch: %w", context.DeadlineExceeded), engine.Failure{Kind: "canceled"}},
		{lost(context.Canceled), engine.Failure{Kind: "canceled", Lost: true}},
	}
	for _, tt := range tests {
		if got := db.Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %+v, want %+v", tt.err, got, tt.want)
		}
	}
}

// encoderFunc is raw bytes as a message.
type encoderFunc []byte

func (e encoderFunc) Encode(b []byte) ([]byte, error) { return append(b, e...), nil }

// netConnOnly hides the socket's descriptor, as a *tls.Conn does: a session on it
// reads and writes through net.Conn.
type netConnOnly struct{ net.Conn }

// connectRaw opens a procedures session as Connect does: over TCP, with raw I/O.
func connectRaw(t *testing.T, db *DB) *procSession {
	s := connect(t, db, engine.Procedures).(*procSession)
	if _, ok := s.conn.nc.(*rawconn.Conn); !ok {
		t.Fatalf("a session over TCP reads and writes through a %T, not raw I/O", s.conn.nc)
	}
	return s
}

// connectNetConn opens a procedures session that does its I/O through net.Conn, as it
// does over TLS.
func connectNetConn(t *testing.T, db *DB) *procSession {
	cfg := db.cfg.Copy()
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := new(net.Dialer).DialContext(ctx, network, addr)
		return netConnOnly{c}, err
	}
	s, err := newProcSession(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, ok := s.conn.nc.(*rawconn.Conn); ok {
		t.Fatal("a session over a net.Conn without descriptor uses raw I/O")
	}
	return s
}

// testWire: the procedures session's error paths against the server, for both kinds
// of I/O.
func testWire(t *testing.T, ts *testServer) {
	db := ts.clone(t)
	ctx := context.Background()
	payment := &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100}
	for _, pc := range []struct {
		name    string
		connect func(t *testing.T, db *DB) *procSession
	}{{"raw", connectRaw}, {"netconn", connectNetConn}} {
		t.Run(pc.name, func(t *testing.T) {
			t.Run("ServerError", func(t *testing.T) {
				s := pc.connect(t, db)
				for range 3 {
					err := s.Payment(ctx, &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 999999, Amount: 100})
					var pgErr *pgconn.PgError
					if !errors.As(err, &pgErr) || pgErr.Code != "P0002" || db.Classify(err).Lost {
						t.Fatalf("Payment of a missing customer = %v (%+v); want P0002", err, db.Classify(err))
					}
					if err := s.Payment(ctx, payment); err != nil || s.customerID != 1 {
						t.Fatalf("Payment after an error = %v, customer %d", err, s.customerID)
					}
				}
			})
			t.Run("Canceled", func(t *testing.T) {
				s := pc.connect(t, db)
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				start := time.Now()
				err := s.Payment(canceled, payment)
				if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
					t.Errorf("Payment with a canceled context = %v after %v", err, time.Since(start))
				}
				if f := db.Classify(err); f != (engine.Failure{Kind: "canceled"}) {
					t.Errorf("Classify(%v) = %+v, want canceled, not lost", err, f)
				}
				if err := s.Payment(ctx, payment); err != nil {
					t.Errorf("Payment after a canceled call: %v", err)
				}
			})
			t.Run("CanceledDuringCall", func(t *testing.T) {
				s := pc.connect(t, db)
				took, err := paymentCanceledWhileBlocked(t, db, s, payment)
				if !errors.Is(err, context.Canceled) || took > 2*time.Second {
					t.Errorf("Payment canceled after 200ms = %v after %v", err, took)
				}
				// The call's connection is closed: canceled, and lost.
				if f := db.Classify(err); f != (engine.Failure{Kind: "canceled", Lost: true}) {
					t.Errorf("Classify(%v) = %+v, want canceled, lost", err, f)
				}
				// The reply may still be on its way: the connection is not reused.
				if err := s.Payment(ctx, payment); err == nil || !db.Classify(err).Lost {
					t.Errorf("Payment after an interrupted call = %v (%+v); want a lost connection", err, db.Classify(err))
				}
			})
			t.Run("Terminated", func(t *testing.T) {
				s := pc.connect(t, db)
				terminateNewest(t, db)
				for range 2 {
					if err := s.Payment(ctx, payment); err == nil || !db.Classify(err).Lost {
						t.Errorf("Payment on a terminated backend = %v (%+v); want a lost connection", err, db.Classify(err))
					}
				}
			})
		})
	}
}

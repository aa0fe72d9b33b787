package postgres

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/storbench/storbench/internal/engine"
)

// TestBatchEncoding compares a batch's request with pgproto3's messages holding pgx's
// own binary encoding of the same values.
func TestBatchEncoding(t *testing.T) {
	c := &wireConn{}
	c.queue(&begin)
	c.queue(&noOrderLine, num(3001), num(4), num(2), num(1), num(77), num(2), num(5), num(int64(-1234567890123)), str("dist-info-ÉÈ"))
	c.queue(&customersByName, num(1), num(10), str("BARBARBAR"))
	got := append(c.wbuf, syncMsg...)

	m := pgtype.NewMap()
	bind := func(st *statement, values ...any) *pgproto3.Bind {
		b := &pgproto3.Bind{PreparedStatement: st.name, ParameterFormatCodes: []int16{pgtype.BinaryFormatCode},
			ResultFormatCodes: []int16{pgtype.BinaryFormatCode}}
		for i, v := range values {
			oid := st.params[i]
			if oid == 0 {
				oid = pgtype.TextOID
			}
			p, err := m.Encode(oid, pgtype.BinaryFormatCode, v, []byte{})
			if err != nil {
				t.Fatalf("%s: encode %v: %v", st.name, v, err)
			}
			b.Parameters = append(b.Parameters, p)
		}
		return b
	}
	want := encode(t, bind(&begin), &pgproto3.Execute{},
		bind(&noOrderLine, int32(3001), int32(4), int32(2), int32(1), int32(77), int32(2), int32(5), int64(-1234567890123), "dist-info-ÉÈ"),
		&pgproto3.Execute{},
		bind(&customersByName, int32(1), int32(10), "BARBARBAR"), &pgproto3.Execute{},
		&pgproto3.Sync{})
	if !bytes.Equal(got, want) {
		t.Errorf("batch:\n got %x\nwant %x", got, want)
	}

	defer func() {
		if recover() == nil {
			t.Error("a text argument for an integer parameter did not panic")
		}
	}()
	c.queue(&noWarehouse, str("1"))
}

// TestBatchProtocol reads batch replies from a fake server: rows in pieces, messages
// to ignore, statements without rows, a server error that skips the statements after
// it and leaves the connection usable, results the client cannot decode, and the ends
// of a connection.
func TestBatchProtocol(t *testing.T) {
	ctx := t.Context()
	db := &DB{}
	c, srv := pipeConn(t)
	// The request: BEGIN, the district's row, an item that may be missing, COMMIT.
	request := func() *reply {
		c.queue(&begin)
		c.queue(&noDistrict, num(1), num(2))
		c.queue(&noItem, num(5))
		c.queue(&commit)
		return c.sendBatch(ctx)
	}
	n := func() int {
		c.queue(&begin)
		c.queue(&noDistrict, num(1), num(2))
		c.queue(&noItem, num(5))
		c.queue(&commit)
		k := len(c.wbuf) + len(syncMsg)
		c.wbuf = c.wbuf[:0]
		return k
	}()
	int4 := func(v int32) []byte { return appendInt4(nil, v)[4:] }
	done := func(tag string) encoder { return &pgproto3.CommandComplete{CommandTag: []byte(tag)} }
	bound := &pgproto3.BindComplete{}
	district := &pgproto3.DataRow{Values: [][]byte{int4(1234), int4(3001)}}
	item := &pgproto3.DataRow{Values: [][]byte{int4(995), []byte("name"), []byte("original data")}}
	long := string(bytes.Repeat([]byte("x"), 100)) // longer than the read buffer

	// read reads the reply as NewOrder's first batch does.
	read := func(r *reply) (dTax, oID int64, itemFound bool, data string, err error) {
		r.exec()
		if r.one(&noDistrict) {
			dTax, oID = r.int(0), r.int(1)
		}
		if itemFound = r.one(&noItem); itemFound {
			data = r.text(2)
		}
		r.exec()
		return dTax, oID, itemFound, data, r.close()
	}

	srv.reply(n, false, bound, done("BEGIN"), &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Message: long},
		bound, district, done("UPDATE 1"), bound, item, item, done("SELECT 2"),
		&pgproto3.ParameterStatus{Name: "TimeZone", Value: "UTC"}, bound, done("COMMIT"), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if dTax, oID, found, data, err := read(request()); err != nil || dTax != 1234 || oID != 3001 || !found || data != "original data" {
		t.Fatalf("read = %d %d %v %q %v; want 1234 3001 true \"original data\" nil", dTax, oID, found, data, err)
	}

	// No item row: one reports none, and the batch goes on.
	srv.reply(n, false, bound, done("BEGIN"), bound, district, done("UPDATE 1"), bound, done("SELECT 0"),
		bound, done("COMMIT"), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if _, _, found, _, err := read(request()); err != nil || found {
		t.Fatalf("read = found %v, %v; want not found, nil", found, err)
	}

	// A server error in the second statement: the rest did not run.
	srv.reply(n, false, bound, done("BEGIN"), &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "40P01", Message: long},
		&pgproto3.ReadyForQuery{TxStatus: 'E'})
	_, _, found, _, err := read(request())
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40P01" || found || c.txStatus != 'E' {
		t.Fatalf("read = found %v, %v, transaction status %c; want the server's error 40P01, E", found, err, c.txStatus)
	}
	if f := db.Classify(err); f != (engine.Failure{Retry: true, Kind: "40P01"}) {
		t.Errorf("Classify(%v) = %+v", err, f)
	}

	// Results the client cannot decode, over a connection that stays usable.
	srv.reply(n, false, bound, done("BEGIN"), bound, &pgproto3.DataRow{Values: [][]byte{nil, int4(1)}}, done("UPDATE 1"),
		bound, item, done("SELECT 1"), bound, done("COMMIT"), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if _, _, _, _, err := read(request()); err == nil || db.Classify(err) != (engine.Failure{Kind: "client"}) {
		t.Errorf("read of a NULL integer = %v (%+v); want a client error", err, db.Classify(err))
	}
	srv.reply(n, false, bound, done("BEGIN"), bound, &pgproto3.DataRow{Values: [][]byte{int4(1)}}, done("UPDATE 1"),
		bound, item, done("SELECT 1"), bound, done("COMMIT"), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if _, _, _, _, err := read(request()); err == nil || db.Classify(err) != (engine.Failure{Kind: "client"}) {
		t.Errorf("read of a row with a column missing = %v (%+v); want a client error", err, db.Classify(err))
	}
	srv.reply(n, false, bound, done("BEGIN"), &pgproto3.ReadyForQuery{TxStatus: 'T'})
	if _, _, _, _, err := read(request()); err == nil || db.Classify(err) != (engine.Failure{Kind: "client"}) {
		t.Errorf("read of a reply that ends early = %v (%+v); want a client error", err, db.Classify(err))
	}

	srv.reply(n, false, bound, done("BEGIN"), bound, district, done("UPDATE 1"), bound, item, done("SELECT 1"),
		bound, done("COMMIT"), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if _, oID, _, _, err := read(request()); err != nil || oID != 3001 {
		t.Fatalf("read after errors = %d, %v; want 3001, nil", oID, err)
	}

	// A fatal error: the server closes the connection.
	srv.reply(n, true, bound, done("BEGIN"), &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01"})
	if _, _, _, _, err := read(request()); db.Classify(err) != (engine.Failure{Kind: "57P01", Lost: true}) {
		t.Fatalf("read = %v (%+v); want the server's error 57P01, lost", err, db.Classify(err))
	}
	if _, _, _, _, err := read(request()); db.Classify(err) != (engine.Failure{Kind: "connection", Lost: true}) {
		t.Errorf("read after a fatal error = %v (%+v); want a lost connection", err, db.Classify(err))
	}

	// The connection ends in the middle of a reply.
	c, srv = pipeConn(t)
	srv.reply(n, true, bound, done("BEGIN"), bound)
	if _, _, _, _, err := read(request()); db.Classify(err) != (engine.Failure{Kind: "connection", Lost: true}) {
		t.Errorf("read = %v (%+v); want a lost connection", err, db.Classify(err))
	}

	// A context done before the batch: nothing is sent, the connection stays.
	c, _ = pipeConn(t)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	c.queue(&begin)
	if err := c.sendBatch(canceled).close(); !errors.Is(err, context.Canceled) || c.broken != nil || len(c.wbuf) != 0 {
		t.Errorf("a batch with a canceled context = %v, broken %v, %d bytes left queued; want canceled, not broken, none",
			err, c.broken, len(c.wbuf))
	}
}

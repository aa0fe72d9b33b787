package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Batches: the sql mode sends a transaction as one to three requests of several
// statements each (per statement a Bind and an Execute, then one Sync: one round
// trip), over the same wire connection as the procedures mode, and reads the replies
// statement by statement. Through pgx's batches the sql mode spent about half of its
// client CPU per transaction in pgx (its type map, statement cache, result readers and
// a write per batch plus the reads); see docs/benchmarks.md.

// arg is a parameter value: an integer, or a text.
type arg struct {
	n    int64
	s    string
	text bool
}

// num is an integer parameter value (int4 or int8, as the statement's parameter is).
func num[T ~int | ~int32 | ~int64](v T) arg { return arg{n: int64(v)} }

// str is a text parameter value.
func str(s string) arg { return arg{s: s, text: true} }

// queue appends a statement to the request being built: st with args, one per
// parameter, each encoded as st's parameter type says. sendBatch sends the request.
func (c *wireConn) queue(st *statement, args ...arg) {
	if len(args) != len(st.params) {
		panic(fmt.Sprintf("%s: %d arguments for %d parameters", st.name, len(args), len(st.params)))
	}
	start := len(c.wbuf)
	b := appendBindStart(c.wbuf, st)
	for i, a := range args {
		switch oid := st.params[i]; {
		case oid == oidInt4 && !a.text:
			b = appendInt4(b, int32(a.n))
		case oid == oidInt8 && !a.text:
			b = appendInt8(b, a.n)
		case (oid == oidText || oid == 0) && a.text:
			b = appendText(b, a.s)
		default:
			panic(fmt.Sprintf("%s: argument %d does not fit parameter type OID %d", st.name, i+1, oid))
		}
	}
	c.wbuf = appendBindEnd(b, start)
}

// sendBatch sends the statements queued since the last sendBatch, and Sync, and
// returns the reader of their replies (reused: one batch at a time). A ctx already done
// sends nothing and leaves the connection be: the reply holds ctx's error. A ctx
// canceled while the reply is read interrupts it and ends the connection, as in call.
func (c *wireConn) sendBatch(ctx context.Context) *reply {
	req := append(c.wbuf, syncMsg...)
	c.wbuf = req[:0]
	r := &c.reply
	*r = reply{c: c, ctx: ctx}
	if err := ctx.Err(); err != nil {
		r.err, r.done = err, true
		return r
	}
	c.watch(ctx)
	if c.broken != nil {
		r.err, r.done = c.broken, true
		return r
	}
	if err := c.transmit(req); err != nil {
		r.fail(c.fail(ctx, err))
	}
	return r
}

// reply reads the replies to a batch, statement by statement, in the order queued.
// Once an error ended the batch (err: the server's, after which the statements left
// did not run; the connection's; or a result the client cannot decode), its reading
// methods return false, and close returns the error.
type reply struct {
	c    *wireConn
	ctx  context.Context
	err  error
	done bool // ReadyForQuery was read, or the connection ended
}

// fail ends the reply with err, the connection's end.
func (r *reply) fail(err error) {
	r.err, r.done = err, true
}

// message returns the next DataRow ('D') or CommandComplete ('C') of the statements'
// replies, or 0 once the batch ended (ReadyForQuery, after an error or not). While
// expecting, a ReadyForQuery before the statements' replies is an error.
func (r *reply) message(expecting bool) (byte, []byte) {
	c := r.c
	for !r.done {
		typ, body, err := c.receive()
		if err != nil {
			r.fail(c.fail(r.ctx, err))
			break
		}
		switch typ {
		case 'D', 'C':
			if r.err == nil {
				return typ, body
			}
		case 'I': // EmptyQueryResponse: a statement of no command
			if r.err == nil {
				return 'C', nil
			}
		case 'E':
			var msg pgproto3.ErrorResponse
			if err := msg.Decode(body); err != nil {
				r.fail(c.fail(r.ctx, err))
				break
			}
			pgErr := pgconn.ErrorResponseToPgError(&msg)
			if isFatal(pgErr) {
				// The server closes the connection: no ReadyForQuery follows.
				c.end(fmt.Errorf("%w: closed by the server: %v", errConnLost, pgErr))
				r.fail(fmt.Errorf("%w: %w", errConnLost, pgErr))
				break
			}
			if r.err == nil {
				r.err = pgErr
			}
		case 'Z':
			c.txStatus = readyStatus(body)
			r.done = true
			if expecting && r.err == nil {
				r.err = errors.New("the batch's reply ended before its statements' results")
			}
		case '2', 'N', 'S', 'A':
			// BindComplete; NoticeResponse, ParameterStatus and NotificationResponse
			// may come at any time and mean nothing here.
		default:
			r.fail(c.fail(r.ctx, fmt.Errorf("unexpected message type %q", typ)))
		}
	}
	return 0, nil
}

// exec reads the reply of a statement whose rows, if any, mean nothing here.
func (r *reply) exec() bool {
	for {
		switch typ, _ := r.message(true); typ {
		case 'C':
			return true
		case 0:
			return false
		}
	}
}

// one reads the reply of a statement of st, keeping its first row: true with that
// row's columns in c.cols (valid until the next row is read), false when it returned no
// row (err nil) or on an error.
func (r *reply) one(st *statement) bool {
	c := r.c
	found := false
	for {
		typ, body := r.message(true)
		switch typ {
		case 'D':
			if found {
				continue
			}
			c.rowBuf = append(c.rowBuf[:0], body...)
			if err := c.splitRow(st, c.rowBuf); err != nil {
				r.err = err
				continue
			}
			found = true
		case 'C':
			return found
		case 0:
			return false
		}
	}
}

// next reads the next row of a statement of st of many rows: true with its columns in
// c.cols (valid until the next read), false at the statement's end or on an error.
func (r *reply) next(st *statement) bool {
	typ, body := r.message(true)
	if typ != 'D' {
		return false
	}
	if err := r.c.splitRow(st, body); err != nil {
		r.err = err
		return false
	}
	return true
}

// int decodes column i of the current row, an integer. A NULL or a value of another
// size is the batch's error (and 0).
func (r *reply) int(i int) int64 {
	v, err := columnInt(r.c.cols[i])
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("result column %d: %w", i+1, err)
	}
	return v
}

// text returns column i of the current row, a text.
func (r *reply) text(i int) string { return string(r.c.cols[i]) }

// close reads the rest of the reply, through ReadyForQuery, and returns the batch's
// error.
func (r *reply) close() error {
	for !r.done {
		r.message(false)
	}
	return r.err
}

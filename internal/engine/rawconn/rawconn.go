// Package rawconn gives the engines' network connections raw I/O. The runtime's
// ordinary syscall path (net.Conn's Read and Write) enters the syscall state, which
// wakes sysmon when the process was idle: sysmon then polls every 20 µs until it backs
// off, and hands Ps to spinning threads, costing more CPU than the syscall itself. A
// client that waits for a reply after every request idles between requests, so it paid
// this on nearly every round trip: in PostgreSQL's sql mode sysmon's polling, sleeping
// and waking took about a third of the client's CPU (perf, 4 users; see
// docs/benchmarks.md). A Conn's socket stays in the Go netpoller (a goroutine parks
// as usual, deadlines work), but the reads and writes inside syscall.RawConn's
// callbacks are raw syscalls on the non-blocking descriptor: no syscall bookkeeping,
// EAGAIN just parks.
package rawconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// DialFunc is how drivers dial (pgconn.DialFunc, go-sql-driver's Config.DialFunc).
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer wraps dial so that the sockets it returns do raw I/O. Drivers negotiate TLS
// over the connection dial returns, so a TLS connection's bytes go through it too.
func Dialer(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Wrap(nc)
	}
}

// Conn is a socket whose Read and Write are raw syscalls. At most one Read and one
// Write may run at a time (as the drivers use their connections); the rest is the
// wrapped connection's.
type Conn struct {
	net.Conn
	rc syscall.RawConn

	// The raw I/O callbacks, built once (a closure per call would allocate), and
	// their buffers and results.
	readFn, writeFn, exchangeFn func(fd uintptr) bool
	rb                          []byte
	rn                          int
	rerr                        syscall.Errno
	wb                          []byte
	werr                        syscall.Errno
}

// Wrap wraps nc, or returns it as it is when it is not a socket.
func Wrap(nc net.Conn) (net.Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &Conn{Conn: nc, rc: rc}
	c.readFn, c.writeFn, c.exchangeFn = c.rawRead, c.rawWrite, c.rawExchange
	return c, nil
}

// SyscallConn returns the socket's descriptor, for drivers that check a connection's
// liveness with it (go-sql-driver's connCheck).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

// Read reads what the peer sent into b, waiting for at least one byte.
func (c *Conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rb, c.rn, c.rerr = b, 0, 0
	err := c.rc.Read(c.readFn)
	c.rb = nil
	switch {
	case err != nil:
		return 0, err
	case c.rerr != 0:
		return 0, os.NewSyscallError("read", c.rerr)
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// Write writes b whole.
func (c *Conn) Write(b []byte) (int, error) {
	c.wb, c.werr = b, 0
	err := c.rc.Write(c.writeFn)
	n := len(b) - len(c.wb)
	c.wb = nil
	if err == nil && c.werr != 0 {
		err = os.NewSyscallError("write", c.werr)
	}
	return n, err
}

// Exchange writes req whole, then reads what the peer sent into b, waiting for at
// least one byte: one round trip of a request/reply protocol. The write is made inside
// the wait for readability, so that the first read waits for the reply instead of
// failing with EAGAIN first: one read(2) fewer per round trip than Write then Read.
// It waits for bytes that arrive after the request: bytes that were waiting before
// it are returned with the reply, so every request must get one.
func (c *Conn) Exchange(req, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errors.New("rawconn: Exchange with an empty read buffer")
	}
	c.wb, c.werr = req, 0
	c.rb, c.rn, c.rerr = b, 0, 0
	err := c.rc.Read(c.exchangeFn)
	c.rb = nil
	if err == nil && c.werr != 0 {
		err = os.NewSyscallError("write", c.werr)
	}
	if err != nil {
		c.wb = nil
		return 0, err
	}
	if len(c.wb) > 0 {
		// The socket's send buffer was full: the rest waits for writability as any
		// write does, then the reply is read as any read is.
		if _, err := c.Write(c.wb); err != nil {
			return 0, err
		}
		return c.Read(b)
	}
	switch {
	case c.rerr != 0:
		return 0, os.NewSyscallError("read", c.rerr)
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// rawExchange is Exchange's rc.Read callback: first the request's write(2)s, then
// false to wait for the reply (the runtime reset the descriptor's readiness before
// calling this, so a reply that arrives during the write still counts); then one
// read(2).
func (c *Conn) rawExchange(fd uintptr) bool {
	if len(c.wb) > 0 {
		if !c.rawWrite(fd) || c.werr != 0 {
			return true // Exchange finishes a write that would block, or fails
		}
		return false
	}
	return c.rawRead(fd)
}

// rawRead is rc.Read's callback: one read(2), or false to wait for readability.
func (c *Conn) rawRead(fd uintptr) bool {
	for {
		n, errno := rawIO(syscall.SYS_READ, fd, c.rb)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerr = n, errno
		return true
	}
}

// rawWrite is rc.Write's callback: write(2) until c.wb is written, or false to wait
// for writability.
func (c *Conn) rawWrite(fd uintptr) bool {
	for len(c.wb) > 0 {
		n, errno := rawIO(syscall.SYS_WRITE, fd, c.wb)
		switch errno {
		case 0:
			c.wb = c.wb[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = errno
			return true
		}
	}
	return true
}

// rawIO is read(2) or write(2) without the runtime's syscall bookkeeping: the
// descriptor is non-blocking, so the call never blocks the thread.
func rawIO(trap, fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	return int(n), errno
}

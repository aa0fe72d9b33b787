package rawconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestConn: a Conn over loopback TCP reads and writes as a net.Conn does: a
// write larger than the socket buffers completes once the peer reads (EAGAIN parks
// it), a read deadline interrupts a read, and the peer's close reads as io.EOF.
func TestConn(t *testing.T) {
	nc, peer := loopbackPair(t)

	// 32 MB: far more than loopback's socket buffers hold.
	big := bytes.Repeat([]byte("storbench"), 32<<20/9)
	received := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		received <- b
	}()
	if n, err := nc.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write of %d bytes = %d, %v", len(big), n, err)
	}
	if b := <-received; !bytes.Equal(b, big) {
		t.Fatalf("the peer received %d bytes, not the %d written", len(b), len(big))
	}

	if _, err := peer.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := nc.Read(buf); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("Read = %q, %v; want reply", buf[:n], err)
	}

	nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := nc.Read(buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline = %d, %v; want os.ErrDeadlineExceeded", n, err)
	}
	nc.SetReadDeadline(time.Time{})

	peer.Close()
	if n, err := nc.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want io.EOF", n, err)
	}
}

// TestExchange: Exchange sends a request and returns the reply's first bytes, also
// when the request is larger than the socket buffers (the rest written as Write
// does), when the reply came before the wait began, and it fails as Read does past a
// deadline and after the peer closed.
func TestExchange(t *testing.T) {
	nc, peer := loopbackPair(t)
	c := nc.(*Conn)
	buf := make([]byte, 64)

	// The peer answers each request once it has read all of it.
	serve := func(size int, reply string) <-chan error {
		done := make(chan error, 1)
		go func() {
			if _, err := io.ReadFull(peer, make([]byte, size)); err != nil {
				done <- err
				return
			}
			_, err := peer.Write([]byte(reply))
			done <- err
		}()
		return done
	}
	for i := range 100 {
		done := serve(5, "reply")
		if n, err := c.Exchange([]byte("hello"), buf); err != nil || string(buf[:n]) != "reply" {
			t.Fatalf("Exchange %d = %q, %v; want reply", i, buf[:n], err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}

	big := bytes.Repeat([]byte("storbench"), 32<<20/9)
	done := serve(len(big), "big reply")
	if n, err := c.Exchange(big, buf); err != nil || string(buf[:n]) != "big reply" {
		t.Fatalf("Exchange of %d bytes = %q, %v; want big reply", len(big), buf[:n], err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := c.Exchange([]byte("unanswered"), buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Exchange past the deadline = %d, %v; want os.ErrDeadlineExceeded", n, err)
	}
	nc.SetReadDeadline(time.Time{})

	peer.Close()
	if n, err := c.Exchange([]byte("hello"), buf); n != 0 || err == nil {
		t.Fatalf("Exchange after the peer closed = %d, %v; want an error", n, err)
	}
}

// loopbackPair returns a Conn over loopback TCP and the socket at its other end.
func loopbackPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := Wrap(dialed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, ok := nc.(*Conn); !ok {
		t.Fatalf("Wrap of a TCP connection = %T, want *Conn", nc)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { peer.Close() })
	return nc, peer
}

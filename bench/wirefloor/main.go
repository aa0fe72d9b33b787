// Command wirefloor measures the client CPU of one request/reply round trip to
// PostgreSQL with nothing around it: no TPC-C inputs, no results, no histograms. It
// is the floor under the driver's client CPU per transaction (bench/tpcc.sh, section
// 3): what the kernel and the Go runtime cost to send a request, wait for the reply
// and read it, on this machine.
//
// Each connection calls a prepared statement in a loop, one Bind/Execute/Sync per
// call, reading the reply through ReadyForQuery. SELECT pg_sleep(S) keeps the server
// busy for S seconds, so the client sleeps between replies as in a run; SELECT 1
// (-sleep 0) answers at once. The figure is the process's getrusage over the loop
// divided by the calls.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/storbench/storbench/internal/engine/rawconn"
)

func main() {
	dsn := flag.String("dsn", "", "PostgreSQL connection URL")
	conns := flag.Int("conns", 4, "connections, each calling in a loop")
	duration := flag.Duration("duration", 10*time.Second, "how long the calls run")
	mode := flag.String("mode", "exchange", "exchange (rawconn.Exchange, as the procedures mode), write-read (rawconn Write then Read), or thread (a blocking socket on a locked thread per connection)")
	sleep := flag.String("sleep", "0.0005", "seconds the server sleeps per call (0: SELECT 1)")
	flag.Parse()
	sql := "SELECT pg_sleep(" + *sleep + ")"
	if *sleep == "0" {
		sql = "SELECT 1"
	}
	var roundTrip func(net.Conn, []byte, []byte) (int, error)
	switch *mode {
	case "exchange":
		roundTrip = func(c net.Conn, req, b []byte) (int, error) { return c.(*rawconn.Conn).Exchange(req, b) }
	case "write-read":
		roundTrip = func(c net.Conn, req, b []byte) (int, error) {
			if _, err := c.Write(req); err != nil {
				return 0, err
			}
			return c.Read(b)
		}
	case "thread":
	default:
		log.Fatalf("-mode %s: want exchange, write-read or thread", *mode)
	}
	// As the driver runs (--client-cpus 1); the thread mode needs a P per thread.
	runtime.GOMAXPROCS(1)
	if *mode == "thread" {
		runtime.GOMAXPROCS(*conns + 1)
	}

	ctx := context.Background()
	var sockets []net.Conn
	for range *conns {
		cfg, err := pgconn.ParseConfig(*dsn)
		if err != nil {
			log.Fatal(err)
		}
		if *mode != "thread" {
			cfg.DialFunc = rawconn.Dialer(cfg.DialFunc)
		}
		pc, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := pc.Prepare(ctx, "s", sql, nil); err != nil {
			log.Fatal(err)
		}
		hc, err := pc.Hijack()
		if err != nil {
			log.Fatal(err)
		}
		sockets = append(sockets, hc.Conn)
	}
	// Bind (unnamed portal, statement "s", no parameters, text results), Execute, Sync.
	req := []byte{'B', 0, 0, 0, 13, 0, 's', 0, 0, 0, 0, 0, 0, 0,
		'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, 'S', 0, 0, 0, 4}

	var stop atomic.Bool
	var calls atomic.Int64
	var wg sync.WaitGroup
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	for _, c := range sockets {
		wg.Go(func() {
			if *mode == "thread" {
				callBlocking(c, req, &stop, &calls)
				return
			}
			buf := make([]byte, 8192)
			for !stop.Load() {
				n, err := roundTrip(c, req, buf)
				for err == nil && !replied(buf[:n]) {
					var m int
					m, err = c.Read(buf[n:])
					n += m
				}
				if err != nil {
					log.Fatal(err)
				}
				calls.Add(1)
			}
		})
	}
	time.Sleep(*duration)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	n := float64(calls.Load())
	user := float64(syscall.TimevalToNsec(after.Utime)-syscall.TimevalToNsec(before.Utime)) / 1e3 / n
	sys := float64(syscall.TimevalToNsec(after.Stime)-syscall.TimevalToNsec(before.Stime)) / 1e3 / n
	fmt.Printf("%s conns=%d sleep=%s calls/s=%.0f user_us=%.1f sys_us=%.1f us_per_call=%.1f\n",
		*mode, *conns, *sleep, n/elapsed.Seconds(), user, sys, user+sys)
}

// replied reports whether b holds whole messages up to ReadyForQuery.
func replied(b []byte) bool {
	for len(b) >= 5 {
		size := int(binary.BigEndian.Uint32(b[1:]))
		if len(b) < 1+size {
			return false
		}
		if b[0] == 'Z' {
			return true
		}
		b = b[1+size:]
	}
	return false
}

// callBlocking calls on a blocking duplicate of c's socket from a thread of its own:
// the reply wakes this thread directly, with no netpoller in between.
func callBlocking(c net.Conn, req []byte, stop *atomic.Bool, calls *atomic.Int64) {
	runtime.LockOSThread()
	f, err := c.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		log.Fatal(err)
	}
	fd := f.Fd() // Fd makes the descriptor blocking
	buf := make([]byte, 8192)
	for !stop.Load() {
		if _, _, e := syscall.Syscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&req[0])), uintptr(len(req))); e != 0 {
			log.Fatal(e)
		}
		n := 0
		for !replied(buf[:n]) {
			m, _, e := syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[n])), uintptr(len(buf)-n))
			if e == syscall.EINTR {
				continue
			}
			if e != 0 || m == 0 {
				log.Fatalf("read: %v", e)
			}
			n += int(m)
		}
		calls.Add(1)
	}
}

// Command wakefloor measures the client CPU of one wait for an arrival with nothing
// around it: N goroutines each wait for their next due time, spread evenly at a
// total rate, and do no work between. It is the floor under what an open-loop run
// adds to the driver's client CPU per transaction (bench/openloop.sh): a user that
// is free before its next arrival parks, and the Go runtime and the kernel wake it
// when the arrival is due.
//
// Two ways of waiting: -wait timer (a Go timer: cheap, but it wakes up to a
// millisecond late on an idle process, its poller waiting in whole milliseconds)
// and -wait timerfd (what the driver does for the last 1.5 ms of a wait: a timerfd
// read through the poller, late by tens of microseconds). The figures are the
// process's getrusage over the loop divided by the waits, and the mean lateness.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	users := flag.Int("users", 8, "goroutines waiting")
	rate := flag.Float64("rate", 50000, "waits a minute, all goroutines together")
	wait := flag.String("wait", "timerfd", "timer or timerfd")
	seconds := flag.Duration("duration", 10*time.Second, "how long")
	procs := flag.Int("procs", 1, "GOMAXPROCS (storbench's --client-cpus)")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	gap := time.Duration(float64(time.Minute) / *rate * float64(*users)) // per goroutine
	start := time.Now().Add(10 * time.Millisecond)
	var waits, late atomic.Int64
	var wg sync.WaitGroup
	before := cpu()
	for i := range *users {
		wg.Go(func() {
			fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
			if err != nil {
				log.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), "timerfd")
			defer f.Close()
			var buf [8]byte
			due := start.Add(time.Duration(i) * gap / time.Duration(*users))
			for time.Since(start) < *seconds {
				due = due.Add(gap)
				d := time.Until(due)
				if d > 0 {
					switch *wait {
					case "timer":
						time.Sleep(d)
					default:
						spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
						if err := unix.TimerfdSettime(fd, 0, &spec, nil); err != nil {
							log.Fatal(err)
						}
						if _, err := f.Read(buf[:]); err != nil {
							log.Fatal(err)
						}
					}
				}
				late.Add(int64(time.Since(due)))
				waits.Add(1)
			}
		})
	}
	wg.Wait()
	n := waits.Load()
	fmt.Printf("%s: %d goroutines, %.0f waits a minute, GOMAXPROCS %d: %.1f µs of CPU per wait, late by %.3f ms on average\n",
		*wait, *users, *rate, *procs, (cpu()-before)/float64(n), float64(late.Load())/float64(n)/1e6)
}

// cpu is this process's user and system time so far, in µs.
func cpu() float64 {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		log.Fatal(err)
	}
	return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e3
}

// Command ringrss measures whether a long bufpolicy=ring run keeps flat
// memory (issue 10): it runs dtrace with a ring tracing this process's
// getppid() calls, makes those calls at a steady rate, and samples
// dtrace's resident set (VmRSS, with its anonymous, file and shared
// parts) from /proc at the given times.
//
//	go build -o /tmp/dtrace ./cmd/dtrace
//	go run ./bench/cmd/ringrss -dtrace /tmp/dtrace -rate 100000 -at 10s,60s,600s
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	bin := flag.String("dtrace", "dtrace", "the dtrace binary")
	rate := flag.Int("rate", 100000, "traced calls per second")
	at := flag.String("at", "10s,600s", "times to sample dtrace's RSS at (the last ends the run)")
	opts := flag.String("x", "bufpolicy=ring", "dtrace -x options, comma-separated")
	flag.Parse()
	var times []time.Duration
	for _, s := range strings.Split(*at, ",") {
		d, err := time.ParseDuration(s)
		if err != nil {
			fatal(err)
		}
		times = append(times, d)
	}
	args := []string{"-q", "-o", "/dev/null"}
	for _, o := range strings.Split(*opts, ",") {
		args = append(args, "-x", o)
	}
	args = append(args, "-n", fmt.Sprintf(`syscall::getppid:entry /pid == %d/ { printf("%%d %%d\n", ++i, timestamp); }`, os.Getpid()))
	cmd := exec.Command(*bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	defer cmd.Process.Kill()
	// The probes are in place once dtrace has opened its buffers; give
	// it a moment beyond that.
	time.Sleep(3 * time.Second)
	stop := make(chan struct{})
	calls := make(chan int64, 1)
	go load(*rate, stop, calls)
	start := time.Now()
	var first int64
	for i, d := range times {
		time.Sleep(time.Until(start.Add(d)))
		st, err := status(cmd.Process.Pid)
		if err != nil {
			fatal(err)
		}
		if i == 0 {
			first = st["VmRSS"]
		}
		fmt.Printf("%6s VmRSS %7.1f MB (anon %.1f, file %.1f, shmem %.1f) %+.1f%%\n", d, mb(st["VmRSS"]),
			mb(st["RssAnon"]), mb(st["RssFile"]), mb(st["RssShmem"]), 100*float64(st["VmRSS"]-first)/float64(first))
	}
	close(stop)
	n := <-calls
	fmt.Printf("%d calls in %s (%.0f/s)\n", n, time.Since(start).Round(time.Second), float64(n)/time.Since(start).Seconds())
	cmd.Process.Signal(unix.SIGINT)
	cmd.Wait()
}

// load calls getppid() rate times a second, in batches every millisecond,
// until stop; it sends the number of calls made.
func load(rate int, stop chan struct{}, calls chan<- int64) {
	runtime.LockOSThread()
	var n int64
	start := time.Now()
	for {
		select {
		case <-stop:
			calls <- n
			return
		default:
		}
		due := int64(time.Since(start).Seconds() * float64(rate))
		for ; n < due; n++ {
			unix.Getppid()
		}
		time.Sleep(time.Millisecond)
	}
}

// status reads the kB fields of /proc/PID/status.
func status(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		var n int64
		if ok && strings.HasSuffix(v, " kB") {
			fmt.Sscan(v, &n)
			out[k] = n
		}
	}
	return out, sc.Err()
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ringrss:", err)
	os.Exit(1)
}

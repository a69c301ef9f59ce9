package inet_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// guestEnv marks a run of TestLoopback inside a guest (TestLoopbackGuests).
const guestEnv = "INET_GUEST"

// program prints one line per firing of the probes the test checks, for
// the TCP port and UDP port it is given.
const program = `
tcp:::accept-established /args[4]->tcp_dport == %[1]d/ {
	printf("accept-established %%s %%d %%s %%d sock %%s:%%d %%s:%%d\n", args[2]->ip_saddr, args[4]->tcp_sport,
	    args[2]->ip_daddr, args[4]->tcp_dport, args[3]->tcps_laddr, args[3]->tcps_lport, args[3]->tcps_raddr, args[3]->tcps_rport);
}
tcp:::connect-established /args[4]->tcp_sport == %[1]d/ {
	printf("connect-established %%s %%d %%s %%d sock %%s:%%d %%s:%%d\n", args[2]->ip_saddr, args[4]->tcp_sport,
	    args[2]->ip_daddr, args[4]->tcp_dport, args[3]->tcps_laddr, args[3]->tcps_lport, args[3]->tcps_raddr, args[3]->tcps_rport);
}
tcp:::send, tcp:::receive /args[4]->tcp_sport == %[1]d || args[4]->tcp_dport == %[1]d/ {
	printf("tcp-%%s %%s %%d %%s %%d %%d\n", probename, args[2]->ip_saddr, args[4]->tcp_sport, args[2]->ip_daddr,
	    args[4]->tcp_dport, args[2]->ip_plength - args[4]->tcp_offset);
}
tcp:::state-change /args[3]->tcps_rport == %[1]d || args[3]->tcps_lport == %[1]d && args[3]->tcps_rport != 0/ {
	printf("state %%s:%%d %%s:%%d %%s %%s\n", args[3]->tcps_laddr, args[3]->tcps_lport, args[3]->tcps_raddr, args[3]->tcps_rport,
	    tcp_state_string[args[5]->tcps_state], tcp_state_string[args[3]->tcps_state]);
}
udp:::send, udp:::receive /args[4]->udp_dport == %[2]d/ {
	printf("udp-%%s %%s %%d %%s %%d %%d\n", probename, args[2]->ip_saddr, args[4]->udp_sport, args[2]->ip_daddr,
	    args[4]->udp_dport, args[4]->udp_length);
}
ip:::send, ip:::receive /args[4]->ipv4_protocol == IPPROTO_UDP && args[2]->ip_saddr == "127.0.0.1" &&
    ((struct udphdr *)((uintptr_t)arg2 + 20))->dest == htons(%[2]d)/ {
	printf("ip-%%s %%s %%s %%d %%s\n", probename, args[2]->ip_saddr, args[2]->ip_daddr, args[2]->ip_plength, args[3]->if_name);
}
`

// exchange makes one TCP connection to ln (the client closes first, so
// that it goes through TIME-WAIT and the server through LAST-ACK) and
// sends one UDP datagram to us; it returns the client's TCP port and the
// UDP sender's port.
func exchange(t *testing.T, ln net.Listener, us net.PacketConn) (cport, uport int) {
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil {
			done <- err
			return
		}
		c.Write([]byte("world"))
		_, err = c.Read(buf) // EOF: the client closed
		if err == io.EOF {
			err = nil
		}
		done <- err
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cport = c.LocalAddr().(*net.TCPAddr).Port
	c.Write([]byte("hello"))
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	uc, err := net.Dial("udp4", us.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	uport = uc.LocalAddr().(*net.UDPAddr).Port
	uc.Write([]byte("ping"))
	us.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := us.ReadFrom(make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	return cport, uport
}

// loopback brings the loopback interface up in a guest (where it starts
// down), builds dtrace (ktracetest.Dtrace) and returns a TCP and a UDP
// socket listening on 127.0.0.1, closed when the test ends.
func loopback(t *testing.T) (net.Listener, net.PacketConn) {
	t.Helper()
	if os.Getenv(guestEnv) != "" {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Fatalf("ip link set lo up: %v: %s", err, out)
		}
	}
	ktracetest.Dtrace(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	us, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { us.Close() })
	return ln, us
}

// TestLoopback: a loopback TCP connection and a UDP datagram fire
// tcp:::accept-established, connect-established, send, receive and
// state-change, udp:::send and receive, and ip:::send and receive, with
// the addresses, ports, lengths and states the exchange used.
func TestLoopback(t *testing.T) {
	ln, us := loopback(t)
	port := ln.Addr().(*net.TCPAddr).Port
	uport := us.LocalAddr().(*net.UDPAddr).Port
	var cport, usport int
	out := ktracetest.Run(t, fmt.Sprintf(program, port, uport), 3*time.Second, func() {
		cport, usport = exchange(t, ln, us)
	})
	t.Logf("output:\n%s", out)
	lo := "127.0.0.1"
	want := []string{
		fmt.Sprintf("accept-established %s %d %s %d sock %s:%d %s:%d", lo, cport, lo, port, lo, port, lo, cport),
		fmt.Sprintf("connect-established %s %d %s %d sock %s:%d %s:%d", lo, port, lo, cport, lo, cport, lo, port),
		// The data segments, each sent and received once.
		fmt.Sprintf("tcp-send %s %d %s %d 5", lo, cport, lo, port),
		fmt.Sprintf("tcp-receive %s %d %s %d 5", lo, cport, lo, port),
		fmt.Sprintf("tcp-send %s %d %s %d 5", lo, port, lo, cport),
		fmt.Sprintf("tcp-receive %s %d %s %d 5", lo, port, lo, cport),
		// The client's states, then the server's.
		fmt.Sprintf("state %s:%d %s:%d state-closed state-syn-sent", lo, 0, lo, port),
		fmt.Sprintf("state %s:%d %s:%d state-syn-sent state-established", lo, cport, lo, port),
		fmt.Sprintf("state %s:%d %s:%d state-established state-fin-wait-1", lo, cport, lo, port),
		fmt.Sprintf("state %s:%d %s:%d state-fin-wait-1 state-fin-wait-2", lo, cport, lo, port),
		fmt.Sprintf("state %s:%d %s:%d state-fin-wait-2 state-time-wait", lo, cport, lo, port),
		fmt.Sprintf("state %s:%d %s:%d state-listen state-syn-received", lo, port, lo, cport),
		fmt.Sprintf("state %s:%d %s:%d state-syn-received state-established", lo, port, lo, cport),
		fmt.Sprintf("state %s:%d %s:%d state-established state-close-wait", lo, port, lo, cport),
		fmt.Sprintf("state %s:%d %s:%d state-close-wait state-last-ack", lo, port, lo, cport),
		fmt.Sprintf("state %s:%d %s:%d state-last-ack state-closed", lo, port, lo, cport),
		fmt.Sprintf("udp-send %s %d %s %d 12", lo, usport, lo, uport),
		fmt.Sprintf("udp-receive %s %d %s %d 12", lo, usport, lo, uport),
		fmt.Sprintf("ip-send %s %s 12 lo", lo, lo),
		fmt.Sprintf("ip-receive %s %s 12 lo", lo, lo),
	}
	lines := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.TrimSpace(l)]++
	}
	for _, w := range want {
		if lines[w] != 1 {
			t.Errorf("%d lines %q, want 1", lines[w], w)
		}
	}
	// Every segment of the connection is sent once and received once.
	seg := regexp.MustCompile(`(?m)^tcp-(send|receive) (.*)$`)
	n := map[string]int{}
	for _, m := range seg.FindAllStringSubmatch(out, -1) {
		n[m[1]]++
		if m[1] == "receive" {
			n["r "+m[2]]++
		} else {
			n["s "+m[2]]++
		}
	}
	if n["send"] < 7 || n["send"] != n["receive"] {
		t.Errorf("%d segments sent, %d received; want the same number, at least 7", n["send"], n["receive"])
	}
	for k, v := range n {
		if strings.HasPrefix(k, "s ") && n["r "+k[2:]] != v {
			t.Errorf("segment %q sent %d times, received %d", k[2:], v, n["r "+k[2:]])
		}
	}
}

// TestLoopbackGuests runs TestLoopback in Debian's 6.12 and 6.1 kernels.
func TestLoopbackGuests(t *testing.T) {
	dir := guesttest.Host(t, guestEnv, ".guest-inet-")
	env := []string{guestEnv + "=1", ktracetest.BinaryEnv + "=" + testprog.BuildCmd(t, dir, "dtrace")}
	guesttest.RunTests(t, dir, env, "TestLoopback", "-t", "900")
}

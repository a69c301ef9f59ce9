package inet_test

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// pcapProgram writes the TCP segments of one port that ip:::send sees
// to a capture file as raw IP, and those ip:::receive sees as Ethernet
// frames to another.
const pcapProgram = `
#pragma D option destructive
#pragma D option pcapsize=64
ip:::send, ip:::receive {
	this->ours = args[4]->ipv4_protocol == IPPROTO_TCP && args[2]->ip_saddr == "127.0.0.1" &&
	    (((struct tcphdr *)((uintptr_t)arg2 + 20))->dest == htons(%[1]d) ||
	    ((struct tcphdr *)((uintptr_t)arg2 + 20))->source == htons(%[1]d));
}
ip:::send /this->ours/ {
	freopen("%[2]s");
	pcap((struct sk_buff *)arg0, PCAP_IP);
	freopen("");
}
ip:::receive /this->ours/ {
	freopen("%[3]s");
	pcap((struct sk_buff *)arg0, PCAP_ETHER);
	freopen("");
}
`

// TestLoopbackPcap: pcap() at ip:::send as PCAP_IP records the packet
// from its IP header (the link-layer header is pushed already where the
// probe fires) and at ip:::receive as PCAP_ETHER from its link-layer
// header (pulled already): tshark decodes both files into the
// connection's segments, addresses and ports.
func TestLoopbackPcap(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("no tshark to read the capture files")
	}
	ln, us := loopback(t)
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	sent, recv := filepath.Join(dir, "send.pcap"), filepath.Join(dir, "receive.pcap")
	var cport int
	out := ktracetest.Run(t, fmt.Sprintf(pcapProgram, port, sent, recv), 3*time.Second, func() {
		cport, _ = exchange(t, ln, us)
	})
	if strings.TrimSpace(out) != "" {
		t.Logf("output:\n%s", out)
	}
	segs := map[string]map[string]int{}
	for _, file := range []string{sent, recv} {
		o, err := exec.Command(tshark, "-r", file, "-T", "fields", "-e", "ip.src", "-e", "tcp.srcport",
			"-e", "ip.dst", "-e", "tcp.dstport").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v\n%s", file, err, o)
		}
		segs[file] = map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(string(o)), "\n") {
			segs[file][strings.Join(strings.Fields(l), " ")]++
		}
		t.Logf("%s:\n%s", filepath.Base(file), o)
	}
	for _, file := range []string{sent, recv} {
		c2s := fmt.Sprintf("127.0.0.1 %d 127.0.0.1 %d", cport, port)
		s2c := fmt.Sprintf("127.0.0.1 %d 127.0.0.1 %d", port, cport)
		n := segs[file][c2s] + segs[file][s2c]
		// SYN, ACK, data, FIN and ACK each way, less what is
		// piggy-backed: at least 7 segments, all of this connection.
		if segs[file][c2s] < 3 || segs[file][s2c] < 3 || n < 7 || len(segs[file]) != 2 {
			t.Errorf("%s: segments %v; want at least 3 each way of %q and %q, at least 7, no others",
				filepath.Base(file), segs[file], c2s, s2c)
		}
	}
	if fmt.Sprint(segs[sent]) != fmt.Sprint(segs[recv]) {
		t.Errorf("segments sent %v, received %v: want the same", segs[sent], segs[recv])
	}
}

// TestLoopbackPcapGuests runs TestLoopbackPcap in Debian's 6.12 and 6.1
// kernels.
func TestLoopbackPcapGuests(t *testing.T) {
	dir := guesttest.Host(t, guestEnv, ".guest-pcap-")
	env := []string{guestEnv + "=1", ktracetest.BinaryEnv + "=" + testprog.BuildCmd(t, dir, "dtrace")}
	guesttest.RunTests(t, dir, env, "TestLoopbackPcap", "-t", "900")
}

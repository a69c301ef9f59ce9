package consumer

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// udpPacket is a raw IPv4 packet: a UDP datagram from 127.0.0.1:1234 to
// 127.0.0.2:5678 with payload "hi" (checksums left 0: tshark does not
// check them by default).
var udpPacket = []byte{
	0x45, 0, 0, 30, 0, 1, 0, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 2,
	0x04, 0xd2, 0x16, 0x2e, 0, 10, 0, 0, 'h', 'i',
}

// TestPcapFile: the capture file pcap() writes under freopen() has the
// pcap format's header (PCAP_IP as LINKTYPE_RAW, the snapshot length)
// and a record per packet (captured and original lengths); a packet of
// another link type is left out. Where tshark is installed (CI installs
// it), it reads the file back.
func TestPcapFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out.pcap")
	var p pcapState
	f, err := p.file(name, dltRaw, 24)
	if err != nil {
		t.Fatal(err)
	}
	p.write(f, 1e9, udpPacket[:24], uint64(len(udpPacket)))
	p.write(f, 2e9, udpPacket, uint64(len(udpPacket)))
	if g, err := p.file(name, 1, 24); g != nil || err != nil {
		t.Errorf("file of another link type: %v, %v; want nil, nil", g, err)
	}
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) != 24+16+24+16+30 || le.Uint32(b) != pcapMagic || le.Uint32(b[16:]) != 24 || le.Uint32(b[20:]) != linkTypeIP {
		t.Fatalf("capture file of %d bytes, header % x", len(b), b[:min(24, len(b))])
	}
	if incl, orig := le.Uint32(b[24+8:]), le.Uint32(b[24+12:]); incl != 24 || orig != 30 {
		t.Errorf("first record: %d bytes captured of %d; want 24 of 30", incl, orig)
	}
	if sec2, sec1 := le.Uint32(b[24+16+24:]), le.Uint32(b[24:]); sec2-sec1 != 1 {
		t.Errorf("time stamps %d and %d s: want 1 s apart", sec1, sec2)
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark is not installed: the file's format checked by hand only")
	}
	out, err := exec.Command(tshark, "-r", name).CombinedOutput()
	// Two packets from 127.0.0.1 to 127.0.0.2, ports 1234 to 5678 (the
	// arrow between them depends on the locale).
	if err != nil || strings.Count(string(out), "127.0.0.2") != 2 || !strings.Contains(string(out), "1234") || !strings.Contains(string(out), "5678") {
		t.Errorf("tshark -r: %v\n%s", err, out)
	}
}

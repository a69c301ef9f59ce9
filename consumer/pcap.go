//go:build linux

package consumer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// pcap() writes the packets it records in the pcap capture file format
// to the file freopen() names when one is in force; otherwise to tshark,
// started once, whose summary line for each packet dtrace prints after
// "pcap \t"; and where tshark cannot be run, the packet is printed as
// tracemem() prints bytes. This is dtrace-utils' behaviour.

// pcapState is pcap()'s state in a consumer.
type pcapState struct {
	// files are the capture files, by the name freopen() gave.
	files map[string]*pcapFile
	// tshark is the running tshark (nil: not started, or it could
	// not be: tried says which).
	tshark *tshark
	tried  bool
	// bootWall is the wall-clock time of CLOCK_MONOTONIC's zero, to
	// stamp packets with.
	bootWall time.Time
}

// pcapFile is a capture stream: a file, or tshark's standard input.
type pcapFile struct {
	w    io.WriteCloser
	link uint32 // the link type of its packets, from the first
}

// The pcap file format: a global header, then a header per packet, all
// in the writer's byte order (little-endian here).
const (
	pcapMagic      = 0xa1b2c3d4 // microsecond time stamps
	pcapVersionMaj = 2
	pcapVersionMin = 4
	// dltRaw is DLT_RAW, D's PCAP_IP; the file format calls the same
	// link type LINKTYPE_RAW, 101 (libpcap's pcap_dump translates it
	// so). The other PCAP_* constants are the same in both.
	dltRaw     = 12
	linkTypeIP = 101
)

// pcap runs pcap(): args are the time (CLOCK_MONOTONIC nanoseconds), the
// packet's length (0: no packet, a NULL skb), of which the record holds
// up to its size, and the link type.
func (c *Consumer) pcap(st *recState, data []byte, r program.Record, args []program.Record) error {
	if len(args) < 3 {
		return c.liberr("Missing or corrupt pcap() record")
	}
	ns, n, link := u64(data, args[0].Offset), u64(data, args[1].Offset), u64(data, args[2].Offset)
	if n == 0 {
		return nil
	}
	pkt := data[r.Offset : r.Offset+uint32(min(n, uint64(r.Size)))]
	snaplen := r.Size
	if c.reopenedName != "" {
		f, err := c.pcaps.file(c.reopenedName, uint32(link), snaplen)
		if err != nil {
			return c.liberr("couldn't write pcap() file \"" + c.reopenedName + "\": " + errText(err))
		}
		if f != nil {
			c.pcaps.write(f, ns, pkt, n)
		}
		return nil
	}
	if ts := c.startTshark(); ts != nil {
		if f := ts.stream(uint32(link), snaplen); f != nil {
			c.pcaps.write(f, ns, pkt, n)
			ts.flush()
		}
		return nil
	}
	return c.emit(st, output.Item{Kind: program.ActTracemem, Data: pkt})
}

// file returns the capture file name, created (emptied) on its first
// use in the session; nil when its packets are of another link type (they
// are dropped, as dtrace-utils drops them).
func (p *pcapState) file(name string, link, snaplen uint32) (*pcapFile, error) {
	if f, ok := p.files[name]; ok {
		if f.link != link {
			return nil, nil
		}
		return f, nil
	}
	w, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	f := &pcapFile{w: w, link: link}
	if err := writeHeader(w, link, snaplen); err != nil {
		w.Close()
		return nil, err
	}
	if p.files == nil {
		p.files = map[string]*pcapFile{}
	}
	p.files[name] = f
	return f, nil
}

// writeHeader writes the pcap file format's global header.
func writeHeader(w io.Writer, link, snaplen uint32) error {
	if link == dltRaw {
		link = linkTypeIP
	}
	var h [24]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], pcapMagic)
	le.PutUint16(h[4:], pcapVersionMaj)
	le.PutUint16(h[6:], pcapVersionMin)
	le.PutUint32(h[16:], snaplen)
	le.PutUint32(h[20:], link)
	_, err := w.Write(h[:])
	return err
}

// write appends a packet stamped ns (CLOCK_MONOTONIC) to f: pkt, the
// bytes captured of its length n. Write errors (tshark gone) drop it.
func (p *pcapState) write(f *pcapFile, ns uint64, pkt []byte, n uint64) {
	if p.bootWall.IsZero() {
		var mono unix.Timespec
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) == nil {
			p.bootWall = time.Now().Add(-time.Duration(mono.Nano()))
		}
	}
	at := p.bootWall.Add(time.Duration(ns))
	b := make([]byte, 16, 16+len(pkt))
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(at.Unix()))
	le.PutUint32(b[4:], uint32(at.Nanosecond()/1000))
	le.PutUint32(b[8:], uint32(len(pkt)))
	le.PutUint32(b[12:], uint32(n))
	_, _ = f.w.Write(append(b, pkt...))
}

// tshark is a tshark process reading a capture from its standard input
// and summarizing each packet on its standard output (-l: a line as
// soon as a packet is read).
type tshark struct {
	cmd  *exec.Cmd
	in   *pcapFile
	bw   *bufio.Writer
	pipe io.WriteCloser
	done chan struct{} // closed once its output is all printed
	// headed: the capture's header went out (with in.link).
	headed bool
}

// unprivUID is the user and group tshark runs as when dtrace runs as
// root: (uid_t)-3, an id no file belongs to (dtrace-utils' choice: -1 is
// nobody on some systems, -2 is taken by others), as a packet dissector
// is a large attack surface.
const unprivUID = 1<<32 - 3

// startTshark starts tshark on the first pcap() without a file: nil when
// it is not installed or does not run (`tshark -v` fails), and then
// pcap() prints packets as bytes for the rest of the session.
func (c *Consumer) startTshark() *tshark {
	p := &c.pcaps
	if p.tried {
		return p.tshark
	}
	p.tried = true
	path, err := exec.LookPath("tshark")
	if err != nil || exec.Command(path, "-v").Run() != nil {
		return nil
	}
	var out io.Writer = os.Stdout
	if o, ok := c.r.(output.Outputter); ok {
		out = o.Output()
	}
	cmd := exec.Command(path, "-l", "-i", "-")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/run", "SHELL=/bin/sh", "USER=nobody"}
	// tshark stops when its input ends, not on dtrace's ^C (its own
	// process group), so that the packets sent before are printed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Getuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: unprivUID, Gid: unprivUID, Groups: []uint32{}}
	}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil
	}
	ts := &tshark{cmd: cmd, pipe: pipe, bw: bufio.NewWriter(pipe), done: make(chan struct{})}
	ts.in = &pcapFile{w: nopCloser{ts.bw}}
	var mu sync.Mutex
	go func() {
		defer close(ts.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			_, _ = io.WriteString(out, "pcap \t"+sc.Text()+"\n")
			mu.Unlock()
		}
	}()
	p.tshark = ts
	return ts
}

// stream returns tshark's input, its header written with the first
// packet's link type; nil for packets of another link type.
func (ts *tshark) stream(link, snaplen uint32) *pcapFile {
	if !ts.headed {
		if writeHeader(ts.bw, link, snaplen) != nil {
			return nil
		}
		ts.in.link, ts.headed = link, true
	}
	if ts.in.link != link {
		return nil
	}
	return ts.in
}

// flush sends tshark what was written, as each packet is.
func (ts *tshark) flush() { _ = ts.bw.Flush() }

// closePcap closes the capture files and ends tshark's input, then waits
// for it to print its last lines and exit.
func (c *Consumer) closePcap() error {
	p := &c.pcaps
	var errs []error
	for name, f := range p.files {
		errs = append(errs, f.w.Close())
		delete(p.files, name)
	}
	if ts := p.tshark; ts != nil {
		p.tshark = nil
		ts.flush()
		_ = ts.pipe.Close()
		<-ts.done
		_ = ts.cmd.Wait()
	}
	return errors.Join(errs...)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

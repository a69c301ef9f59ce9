package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// DefaultPcapSize is the bytes of a packet pcap() records without the
// pcapsize option: an Ethernet frame's 1,514, as in dtrace-utils.
const DefaultPcapSize = 1514

// pcapSize is the record's packet size: pcapsize rounded up to 8.
func (g *gen) pcapSize() uint32 {
	n := g.opts.PcapSize
	if n == 0 {
		n = DefaultPcapSize
	}
	return (n + 7) &^ 7
}

// Link types pcap() records from a header other than skb->data's (their
// values in dlib's pcap.d).
const (
	pcapEther = 1  // PCAP_ETHER: the frame, from the link-layer header
	pcapIP    = 12 // PCAP_IP: the packet, from the IP header
)

// skbHeaderUnset is the value of an sk_buff's 16-bit header offsets
// (mac_header, network_header) that were never set.
const skbHeaderUnset = 0xffff

// actionPcap compiles pcap(skb, proto) as a statement: the linear part
// of the socket buffer's packet (skb->len less skb->data_len, the bytes
// in paged fragments) up to pcapsize bytes, with the time, the linear
// part's length (the consumer records the packet as that long, captured
// up to pcapsize) and the link type (PCAP_IP, ...) as arguments. The bytes
// start at skb->data, except where the link type says another header:
// PCAP_IP starts at the IP header (skb->head + skb->network_header) when
// it is set and lies after skb->data within the linear part, as on a
// packet leaving through a device, whose link-layer header is pushed
// already; PCAP_ETHER starts at the link-layer header (skb->head +
// skb->mac_header) when it is set and lies before skb->data, as on a
// packet coming in, whose link-layer header the driver pulled. A NULL or
// unreadable skb records length 0, which the consumer skips, as
// dtrace-utils does; it is no fault.
func (f *fn) actionPcap(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 2, 2)
	mo := f.g.opts.MemberOffset
	if mo == nil {
		f.fail(c, "pcap( ) needs the kernel's type information")
	}
	var offs [6]uint32
	for i, m := range [6]string{"len", "data_len", "data", "head", "network_header", "mac_header"} {
		o, err := mo("sk_buff", m)
		if err != nil {
			f.fail(c, "pcap( ) needs struct sk_buff of the kernel: %v", err)
		}
		offs[i] = o
	}
	size := f.g.pcapSize()
	off := f.recAlloc(size, 8)
	st := f.tmp(8)
	p := f.expr(c.Args[0])
	proto := f.expr(c.Args[1])
	f.convert(proto, f.typeOf(c.Args[1]), program.TypeLong)
	// The link type and the length wait in scratch slots: the jumps
	// past the reads leave from points where other registers are live.
	pr := f.tmp(8)
	f.emit(asm.StoreMem(regScratch, int16(pr), proto, asm.DWord))
	f.free(proto)
	ln := f.tmp(8)
	f.emit(storeImm(regScratch, int16(ln), 0, asm.DWord))
	done := f.label("pcapend")
	f.emit(asm.JEq.Imm(p, 0, done))
	n := f.readKernel(p, offs[0], st, asm.Word)
	d := f.readKernel(p, offs[1], st, asm.Word)
	f.emit(asm.Sub.Reg32(n, d))
	f.free(d)
	q := f.readKernel(p, offs[2], st, asm.DWord)
	f.pcapHeader(p, n, q, pr, st, offs[3], offs[4], offs[5])
	f.free(p)
	f.emit(asm.StoreMem(regScratch, int16(ln), n, asm.DWord))
	ok := f.label("pcaplen")
	f.emit(asm.JLE.Imm(n, int32(size), ok), asm.Mov.Imm(n, int32(size)))
	f.mark(ok)
	// A failed read zeroes the bytes: the record's length says what
	// was asked for, as dtrace-utils' does.
	f.call(asm.FnProbeReadKernel, scr(f.g.layout.Output+off), reg(n), reg(q))
	f.mark(done)
	n = f.alloc()
	f.emit(asm.LoadMem(n, regScratch, int16(ln), asm.DWord))
	f.call(asm.FnKtimeGetNs)
	t := f.result()
	proto = f.alloc()
	f.emit(asm.LoadMem(proto, regScratch, int16(pr), asm.DWord))
	f.recItem(program.Record{Action: act, Offset: off, Size: size, Kind: program.KindBytes, FormatID: -1, AggID: -1, NArgs: 3})
	f.recItem(f.storeReg(t, program.TypeULong, program.ActArg))
	f.recItem(f.storeReg(n, program.TypeULong, program.ActArg))
	f.recItem(f.storeReg(proto, program.TypeLong, program.ActArg))
}

// pcapHeader moves the start q and the length n of the bytes pcap()
// records of the sk_buff p to the header its link type (in scratch slot
// pr) starts at; the offsets are sk_buff's head, network_header and
// mac_header.
func (f *fn) pcapHeader(p, n, q asm.Register, pr, st, head, network, mac uint32) {
	end, link := f.label("pcaphdr"), f.label("pcaplink")
	t := f.alloc()
	f.emit(asm.LoadMem(t, regScratch, int16(pr), asm.DWord), asm.JNE.Imm(t, pcapIP, link))
	f.free(t)
	h := f.readKernel(p, head, st, asm.DWord)
	o := f.readKernel(p, network, st, asm.Half)
	// The IP header at h+o, delta bytes after q and within the n.
	f.emit(asm.JEq.Imm(o, skbHeaderUnset, end), asm.Add.Reg(h, o),
		asm.JLE.Reg(h, q, end), asm.Sub.Reg(h, q), asm.JGE.Reg(h, n, end),
		asm.Sub.Reg(n, h), asm.Add.Reg(q, h), asm.Ja.Label(end))
	f.free(h, o)
	f.mark(link)
	t = f.alloc()
	f.emit(asm.LoadMem(t, regScratch, int16(pr), asm.DWord), asm.JNE.Imm(t, pcapEther, end))
	f.free(t)
	h = f.readKernel(p, head, st, asm.DWord)
	o = f.readKernel(p, mac, st, asm.Half)
	// The link-layer header at h+o, delta bytes before q.
	f.emit(asm.JEq.Imm(o, skbHeaderUnset, end), asm.Add.Reg(h, o),
		asm.JGE.Reg(h, q, end), asm.Mov.Reg(o, q), asm.Sub.Reg(o, h),
		asm.Add.Reg(n, o), asm.Mov.Reg(q, h))
	f.free(h, o)
	f.mark(end)
}

// readKernel returns the size-sized word at kernel address p+off,
// zero-extended, or 0 when it cannot be read; the bytes pass through the
// scratch slot st. p is kept.
func (f *fn) readKernel(p asm.Register, off, st uint32, size asm.Size) asm.Register {
	f.emit(storeImm(regScratch, int16(st), 0, asm.DWord))
	a := f.alloc()
	f.emit(asm.Mov.Reg(a, p), asm.Add.Imm(a, int32(off)))
	f.call(asm.FnProbeReadKernel, scr(st), imm(int64(size.Sizeof())), reg(a))
	v := f.alloc()
	f.emit(asm.LoadMem(v, regScratch, int16(st), size))
	return v
}

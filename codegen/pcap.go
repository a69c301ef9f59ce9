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

// actionPcap compiles pcap(skb, proto) as a statement: the linear part
// of the socket buffer's packet (skb->len less skb->data_len, the bytes
// in paged fragments) up to pcapsize bytes from skb->data, with the time,
// the linear part's length (the consumer records the packet as that long,
// captured up to pcapsize) and the link type (PCAP_IP, ...) as arguments. A
// NULL or unreadable skb records length 0, which the consumer skips, as
// dtrace-utils does; it is no fault.
func (f *fn) actionPcap(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 2, 2)
	mo := f.g.opts.MemberOffset
	if mo == nil {
		f.fail(c, "pcap( ) needs the kernel's type information")
	}
	var offs [3]uint32
	for i, m := range [3]string{"len", "data_len", "data"} {
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
	// The length waits in a scratch slot: the jump past the reads
	// leaves from a point where other registers are live.
	ln := f.tmp(8)
	f.emit(storeImm(regScratch, int16(ln), 0, asm.DWord))
	done := f.label("pcapend")
	f.emit(asm.JEq.Imm(p, 0, done))
	n := f.readKernel(p, offs[0], st, asm.Word)
	d := f.readKernel(p, offs[1], st, asm.Word)
	f.emit(asm.Sub.Reg32(n, d))
	f.free(d)
	f.emit(asm.StoreMem(regScratch, int16(ln), n, asm.DWord))
	ok := f.label("pcaplen")
	f.emit(asm.JLE.Imm(n, int32(size), ok), asm.Mov.Imm(n, int32(size)))
	f.mark(ok)
	q := f.readKernel(p, offs[2], st, asm.DWord)
	// A failed read zeroes the bytes: the record's length says what
	// was asked for, as dtrace-utils' does.
	f.call(asm.FnProbeReadKernel, scr(f.g.layout.Output+off), reg(n), reg(q))
	f.mark(done)
	f.free(p)
	n = f.alloc()
	f.emit(asm.LoadMem(n, regScratch, int16(ln), asm.DWord))
	f.call(asm.FnKtimeGetNs)
	t := f.result()
	proto := f.expr(c.Args[1])
	f.convert(proto, f.typeOf(c.Args[1]), program.TypeLong)
	f.recItem(program.Record{Action: act, Offset: off, Size: size, Kind: program.KindBytes, FormatID: -1, AggID: -1, NArgs: 3})
	f.recItem(f.storeReg(t, program.TypeULong, program.ActArg))
	f.recItem(f.storeReg(n, program.TypeULong, program.ActArg))
	f.recItem(f.storeReg(proto, program.TypeLong, program.ActArg))
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

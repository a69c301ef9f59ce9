/*
 * DTrace's <sys/sdt.h> for Linux, from dtrace-go (github.com/dtrace-go/dtrace).
 *
 * Statically defined probes for user programs:
 *
 *	DTRACE_PROBE(provider, name, arg...)	0 to 12 arguments
 *	DTRACE_PROBE1(provider, name, arg1) ... DTRACE_PROBE12(...)
 *
 * Each probe site is a single nop and a note in the section .note.stapsdt
 * (the format of SystemTap's <sys/sdt.h>, which the usdt provider of
 * dtrace reads, as do gdb, perf and bpftrace). Arguments are passed as
 * unsigned long, as DTrace's own header passes them; the note says where
 * each one is (a register, a memory operand or a constant), so the probe
 * costs nothing when it is not traced.
 *
 * The headers written by dtrace -h use the numbered macros and name a
 * semaphore per probe (PROVIDER_NAME_ENABLED()); they compile against
 * this header or SystemTap's. No link step is needed: dtrace -G writes an
 * object with nothing to add for build files that call it.
 *
 * Find it with -I: the directory include/ of the dtrace-go source holds
 * sys/sdt.h (cc -I$DTRACE_GO/include ...); see docs/USDT.md.
 */

#ifndef _SYS_SDT_H
#define _SYS_SDT_H
#define _DTRACE_GO_SYS_SDT_H 1

/*
 * Addresses in the note, and arguments, are as wide as a pointer: 8 bytes
 * on x86-64 and arm64, 4 on i386 (gcc -m32).
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define __dtrace_sdt_addr	".8byte"
#define __dtrace_sdt_size	"8"
#elif defined(__i386__)
#define __dtrace_sdt_addr	".4byte"
#define __dtrace_sdt_size	"4"
#else
#error "<sys/sdt.h>: only x86-64, i386 and arm64 are supported"
#endif

/*
 * The semaphore a probe's note names: with _SDT_HAS_SEMAPHORES (set by
 * dtrace -h headers) the unsigned short provider_name_semaphore, which the
 * kernel counts up while the probe is traced; otherwise none.
 */
#ifdef _SDT_HAS_SEMAPHORES
#define __dtrace_sdt_sem(provider, name) #provider "_" #name "_semaphore"
#else
#define __dtrace_sdt_sem(provider, name) "0"
#endif

/*
 * The probe site: a nop labelled 990, then its note. The note records the
 * nop's address, the address of .stapsdt.base (so that a consumer can
 * tell how far a prelinked object moved), the semaphore, and three
 * strings: provider, name and the argument operands. .stapsdt.base is one
 * byte made once per object (a weak, hidden symbol in a COMDAT group).
 */
#define __dtrace_sdt_asm(provider, name, argfmt)			\
	"990:\tnop\n"							\
	"\t.pushsection .note.stapsdt,\"?\",\"note\"\n"			\
	"\t.balign 4\n"							\
	"\t.4byte 992f-991f, 994f-993f, 3\n"				\
	"991:\t.asciz \"stapsdt\"\n"					\
	"992:\t.balign 4\n"						\
	"993:\t" __dtrace_sdt_addr " 990b\n"				\
	"\t" __dtrace_sdt_addr " _.stapsdt.base\n"			\
	"\t" __dtrace_sdt_addr " " __dtrace_sdt_sem(provider, name) "\n"	\
	"\t.asciz \"" #provider "\"\n"					\
	"\t.asciz \"" #name "\"\n"					\
	"\t.asciz \"" argfmt "\"\n"					\
	"994:\t.balign 4\n"						\
	"\t.popsection\n"						\
	"\t.ifndef _.stapsdt.base\n"					\
	"\t.pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	"\t.weak _.stapsdt.base\n"					\
	"\t.hidden _.stapsdt.base\n"					\
	"_.stapsdt.base:\t.space 1\n"					\
	"\t.size _.stapsdt.base, 1\n"					\
	"\t.popsection\n"						\
	"\t.endif\n"

/*
 * Operand k of a probe: any of a constant ("n"), an offsettable memory
 * reference ("o") or a register ("r"), whichever the compiler has the
 * value in; the assembler prints it in the form the note's reader parses
 * ($5, -16(%rbp), %rax on x86-64; -12(%ebp), %eax on i386).
 */
#define __dtrace_sdt_op(k, x)	[__sdt_a##k] "nor" ((unsigned long)(x))
#define __dtrace_sdt_f1	__dtrace_sdt_size "@%[__sdt_a1]"
#define __dtrace_sdt_f2	__dtrace_sdt_f1 " " __dtrace_sdt_size "@%[__sdt_a2]"
#define __dtrace_sdt_f3	__dtrace_sdt_f2 " " __dtrace_sdt_size "@%[__sdt_a3]"
#define __dtrace_sdt_f4	__dtrace_sdt_f3 " " __dtrace_sdt_size "@%[__sdt_a4]"
#define __dtrace_sdt_f5	__dtrace_sdt_f4 " " __dtrace_sdt_size "@%[__sdt_a5]"
#define __dtrace_sdt_f6	__dtrace_sdt_f5 " " __dtrace_sdt_size "@%[__sdt_a6]"
#define __dtrace_sdt_f7	__dtrace_sdt_f6 " " __dtrace_sdt_size "@%[__sdt_a7]"
#define __dtrace_sdt_f8	__dtrace_sdt_f7 " " __dtrace_sdt_size "@%[__sdt_a8]"
#define __dtrace_sdt_f9	__dtrace_sdt_f8 " " __dtrace_sdt_size "@%[__sdt_a9]"
#define __dtrace_sdt_f10 __dtrace_sdt_f9 " " __dtrace_sdt_size "@%[__sdt_a10]"
#define __dtrace_sdt_f11 __dtrace_sdt_f10 " " __dtrace_sdt_size "@%[__sdt_a11]"
#define __dtrace_sdt_f12 __dtrace_sdt_f11 " " __dtrace_sdt_size "@%[__sdt_a12]"

#define __dtrace_sdt_probe(provider, name, fmt, ...)			\
	do {								\
		__asm__ __volatile__(__dtrace_sdt_asm(provider, name, fmt) \
		    : : __VA_ARGS__);					\
	} while (0)

#define DTRACE_PROBE0(provider, name)					\
	do {								\
		__asm__ __volatile__(__dtrace_sdt_asm(provider, name, "")); \
	} while (0)

#define DTRACE_PROBE1(provider, name, a1)				\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f1,		\
	    __dtrace_sdt_op(1, a1))
#define DTRACE_PROBE2(provider, name, a1, a2)				\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f2,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2))
#define DTRACE_PROBE3(provider, name, a1, a2, a3)			\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f3,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3))
#define DTRACE_PROBE4(provider, name, a1, a2, a3, a4)			\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f4,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4))
#define DTRACE_PROBE5(provider, name, a1, a2, a3, a4, a5)		\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f5,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5))
#define DTRACE_PROBE6(provider, name, a1, a2, a3, a4, a5, a6)		\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f6,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6))
#define DTRACE_PROBE7(provider, name, a1, a2, a3, a4, a5, a6, a7)	\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f7,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7))
#define DTRACE_PROBE8(provider, name, a1, a2, a3, a4, a5, a6, a7, a8)	\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f8,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7), __dtrace_sdt_op(8, a8))
#define DTRACE_PROBE9(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f9,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7), __dtrace_sdt_op(8, a8),		\
	    __dtrace_sdt_op(9, a9))
#define DTRACE_PROBE10(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, \
	a10)								\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f10,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7), __dtrace_sdt_op(8, a8),		\
	    __dtrace_sdt_op(9, a9), __dtrace_sdt_op(10, a10))
#define DTRACE_PROBE11(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, \
	a10, a11)							\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f11,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7), __dtrace_sdt_op(8, a8),		\
	    __dtrace_sdt_op(9, a9), __dtrace_sdt_op(10, a10),		\
	    __dtrace_sdt_op(11, a11))
#define DTRACE_PROBE12(provider, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, \
	a10, a11, a12)							\
	__dtrace_sdt_probe(provider, name, __dtrace_sdt_f12,		\
	    __dtrace_sdt_op(1, a1), __dtrace_sdt_op(2, a2),		\
	    __dtrace_sdt_op(3, a3), __dtrace_sdt_op(4, a4),		\
	    __dtrace_sdt_op(5, a5), __dtrace_sdt_op(6, a6),		\
	    __dtrace_sdt_op(7, a7), __dtrace_sdt_op(8, a8),		\
	    __dtrace_sdt_op(9, a9), __dtrace_sdt_op(10, a10),		\
	    __dtrace_sdt_op(11, a11), __dtrace_sdt_op(12, a12))

/*
 * DTRACE_PROBE(provider, name, arg...): the numbered macro for the count
 * of arguments (the GNU ", ## __VA_ARGS__" drops the comma when there are
 * none, as in C++20's __VA_OPT__).
 */
#define __dtrace_sdt_count(...)						\
	__dtrace_sdt_count_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, \
	    2, 1, 0)
#define __dtrace_sdt_count_(z, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10,	\
	a11, a12, n, ...) n
#define __dtrace_sdt_paste(a, b)	__dtrace_sdt_paste_(a, b)
#define __dtrace_sdt_paste_(a, b)	a ## b
#define DTRACE_PROBE(provider, name, ...)				\
	__dtrace_sdt_paste(DTRACE_PROBE, __dtrace_sdt_count(0, ## __VA_ARGS__)) \
	    (provider, name, ## __VA_ARGS__)

#endif /* _SYS_SDT_H */

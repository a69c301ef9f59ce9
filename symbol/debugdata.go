package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz"
)

// MiniDebugInfo (.gnu_debugdata, as Fedora and its kin ship) is an
// xz-compressed ELF file holding the .symtab entries of the functions
// .dynsym leaves out: enough to name every function of a stripped
// library without its debug package.

// Limits of .gnu_debugdata: real sections are a few hundred KiB and
// expand to a few MiB, compressed by xz with its default 8 MiB
// dictionary.
const (
	maxDebugData     = 64 << 20  // compressed
	maxDebugDataELF  = 256 << 20 // expanded
	maxDebugDataDict = 64 << 20  // the largest dictionary xz -9 uses
)

// debugData returns the ELF file that f's .gnu_debugdata section holds,
// nil when there is none.
func debugData(f *elf.File) (*elf.File, error) {
	s := f.Section(".gnu_debugdata")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > maxDebugData {
		return nil, fmt.Errorf(".gnu_debugdata: %d bytes", s.Size)
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %w", err)
	}
	return parseDebugData(b, maxDebugDataELF)
}

// parseDebugData expands an xz stream of at most limit bytes and reads
// it as an ELF file.
func parseDebugData(b []byte, limit int64) (*elf.File, error) {
	raw, err := unxz(b, limit)
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %w", err)
	}
	ef, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %w", err)
	}
	return ef, nil
}

// unxz expands one xz stream. The stream's index is read first, so that
// a stream claiming more than limit bytes, or a dictionary larger than
// any xz preset uses (which the decoder would allocate whole), is refused
// before anything is allocated for it.
func unxz(b []byte, limit int64) ([]byte, error) {
	// Stream padding: zero bytes in groups of four after the footer.
	for len(b) >= 16 && len(b)%4 == 0 && bytes.Equal(b[len(b)-4:], []byte{0, 0, 0, 0}) {
		b = b[:len(b)-4]
	}
	total, err := checkXZ(b, limit)
	if err != nil {
		return nil, err
	}
	r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	// The index's word for the size is checked as the bytes come.
	out := bytes.NewBuffer(make([]byte, 0, min(total, 8<<20)))
	n, err := io.Copy(out, io.LimitReader(r, total+1))
	if err != nil {
		return nil, err
	}
	if n != total {
		return nil, fmt.Errorf("xz stream expands to %d bytes, its index says %d", n, total)
	}
	return out.Bytes(), nil
}

var (
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	errBadXZ  = errors.New("not a well-formed xz stream")
	errBigXZ  = errors.New("xz stream too large")
	lzma2ID   = uint64(0x21)
	xzRecords = 1 << 16 // blocks in one stream; real ones have one
)

// checkXZ walks a single xz stream's footer, index and block headers and
// returns the size it expands to: at most limit, and no block's LZMA2
// dictionary above maxDebugDataDict.
func checkXZ(b []byte, limit int64) (int64, error) {
	if len(b) < 24 || !bytes.Equal(b[:6], xzMagic) || !bytes.Equal(b[len(b)-2:], []byte("YZ")) {
		return 0, errBadXZ
	}
	foot := b[len(b)-12:]
	indexSize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	indexAt := int64(len(b)) - 12 - indexSize
	if indexAt < 12 {
		return 0, errBadXZ
	}
	idx := b[indexAt : len(b)-12]
	if idx[0] != 0 {
		return 0, errBadXZ
	}
	idx = idx[1:]
	n, idx, err := uvarint(idx)
	if err != nil || n > uint64(xzRecords) {
		return 0, errBadXZ
	}
	var total int64
	at := int64(12) // first block, after the stream header
	for range n {
		var unpadded, size uint64
		if unpadded, idx, err = uvarint(idx); err != nil {
			return 0, err
		}
		if size, idx, err = uvarint(idx); err != nil {
			return 0, err
		}
		if size > uint64(limit) || total+int64(size) > limit {
			return 0, errBigXZ
		}
		total += int64(size)
		if unpadded > uint64(indexAt) || at+int64(unpadded) > indexAt {
			return 0, errBadXZ
		}
		if err := checkBlockHeader(b[at:indexAt]); err != nil {
			return 0, err
		}
		at += (int64(unpadded) + 3) &^ 3
	}
	return total, nil
}

// checkBlockHeader reads the filter flags of the block header at the
// start of b and refuses an LZMA2 dictionary above maxDebugDataDict.
func checkBlockHeader(b []byte) error {
	if len(b) < 1 || b[0] == 0 {
		return errBadXZ
	}
	size := (int(b[0]) + 1) * 4
	if size > len(b) {
		return errBadXZ
	}
	h := b[2 : size-4] // after the size and flags bytes, before the CRC
	flags := b[1]
	var err error
	for _, bit := range []byte{0x40, 0x80} { // compressed, uncompressed size
		if flags&bit != 0 {
			if _, h, err = uvarint(h); err != nil {
				return err
			}
		}
	}
	for range int(flags&3) + 1 {
		var id, n uint64
		if id, h, err = uvarint(h); err != nil {
			return err
		}
		if n, h, err = uvarint(h); err != nil {
			return err
		}
		if n > uint64(len(h)) {
			return errBadXZ
		}
		if id == lzma2ID {
			if n != 1 {
				return errBadXZ
			}
			if d, ok := lzma2Dict(h[0]); !ok || d > maxDebugDataDict {
				return errBigXZ
			}
		}
		h = h[n:]
	}
	return nil
}

// lzma2Dict decodes an LZMA2 dictionary-size byte: 2 or 3 times a power
// of two from 4 KiB up.
func lzma2Dict(c byte) (int64, bool) {
	if c > 40 {
		return 0, false
	}
	if c == 40 {
		return 1<<32 - 1, true
	}
	return int64(2|c&1) << (c/2 + 11), true
}

// uvarint reads one of xz's multibyte integers (at most nine bytes).
func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 9 {
		return 0, nil, errBadXZ
	}
	return v, b[n:], nil
}

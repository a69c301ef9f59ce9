package ctf

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// archiveMagic opens a CTF archive (libctf's ctf-archive.c), written in
// the byte order of the machine that made it.
const archiveMagic = 0x8b47f2a4d7623eeb

// errFormat is what libctf says of a file that is neither (ECTF_FMT).
var errFormat = errors.New("File is not in CTF or ELF format")

// CheckArchive says whether path can be opened as libctf's ctf_arc_open
// would open it: a CTF archive, a single CTF dictionary, or an ELF file
// with a .ctf section. It reads only what identifies the file; it does
// not read the types.
func CheckArchive(path string) error {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	defer f.Close()
	return checkArchive(f)
}

func checkArchive(r io.ReaderAt) error {
	var head [8]byte
	n, err := r.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return err
	}
	if n == len(head) {
		m := binary.LittleEndian.Uint64(head[:])
		if m == archiveMagic || binary.BigEndian.Uint64(head[:]) == archiveMagic {
			return nil
		}
	}
	if n >= 2 {
		if binary.LittleEndian.Uint16(head[:]) == magic || binary.BigEndian.Uint16(head[:]) == magic {
			return nil
		}
	}
	if n >= 4 && string(head[:4]) == elf.ELFMAG {
		ef, err := elf.NewFile(r)
		if err != nil {
			return fmt.Errorf("unreadable ELF file: %v", err)
		}
		if ef.Section(".ctf") == nil {
			return errors.New("no .ctf section in ELF file")
		}
		return nil
	}
	return errFormat
}

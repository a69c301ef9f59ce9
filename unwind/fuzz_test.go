package unwind

import (
	"debug/elf"
	"testing"
)

// FuzzCFI feeds bytes to the call-frame parser as both section kinds and
// runs every FDE's instructions: no input may panic it or make it loop.
func FuzzCFI(f *testing.F) {
	// A CIE (x86-64's usual "zR": CFA = rsp+8, ra at cfa-8) and an FDE
	// that pushes rbp and sets CFA = rbp+16, then the terminator.
	f.Add([]byte{
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
		0x0c, 7, 8, 0x90, 1, 0, 0,
		0x1c, 0, 0, 0, 0x1c, 0, 0, 0, 0xe0, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0,
		0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x0a, 0x0b, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0,
	})
	for _, path := range []string{"/usr/bin/gzip", "/lib64/ld-linux-x86-64.so.2"} {
		e, err := elf.Open(path)
		if err != nil {
			continue
		}
		if s := e.Section(".eh_frame"); s != nil {
			if b, err := s.Data(); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
		e.Close()
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, sec := range []Section{EHFrame, DebugFrame} {
			fdes, _ := Parse(b, 0x1000, sec)
			for _, fde := range fdes {
				rows, _ := fde.Rows()
				if len(rows) > maxRows {
					t.Fatalf("%d rows", len(rows))
				}
				for i := 1; i < len(rows); i++ {
					if rows[i].PC <= rows[i-1].PC {
						t.Fatalf("rows out of order: %v then %v", rows[i-1], rows[i])
					}
				}
			}
		}
	})
}

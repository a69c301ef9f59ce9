package ctf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckArchive(t *testing.T) {
	arc := binary.LittleEndian.AppendUint64(nil, archiveMagic)
	var dict bytes.Buffer
	if err := Write(&dict, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"empty", nil, false},
		{"text", []byte("not a CTF archive\n"), false},
		{"archive", append(arc, make([]byte, 32)...), true},
		{"dict", dict.Bytes(), true},
		{"elf without .ctf", []byte("\x7fELF\x02\x01\x01"), false},
	} {
		if err := checkArchive(bytes.NewReader(c.data)); (err == nil) != c.ok {
			t.Errorf("%s: checkArchive = %v, want ok %v", c.name, err, c.ok)
		}
	}
	if err := CheckArchive(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: CheckArchive = %v, want ENOENT", err)
	}
	if err := CheckArchive(os.DevNull); err != errFormat {
		t.Errorf("%s: CheckArchive = %v, want %v", os.DevNull, err, errFormat)
	}
}

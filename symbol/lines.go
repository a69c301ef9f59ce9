package symbol

import (
	"debug/dwarf"
	"debug/elf"
	"sort"
)

// lineTable is an object's DWARF line rows, sorted by address.
type lineTable struct {
	rows []lineRow
}

type lineRow struct {
	addr uint64
	file string
	line int
	end  bool // end of a sequence: no line from here
}

// Line returns the source file and line of the link-time address vaddr
// from the DWARF line table of the object or, when it has none, of its
// separate debug file (found as DebugFile finds it, debuginfod's cache
// included when the symbols came from there). The table is read on the
// first call.
func (o *Object) Line(vaddr uint64) (file string, line int, ok bool) {
	o.linesOnce.Do(func() { o.lines = o.readLines() })
	t := o.lines
	if t == nil {
		return "", 0, false
	}
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > vaddr }) - 1
	if i < 0 || t.rows[i].end || t.rows[i].line == 0 {
		return "", 0, false
	}
	return t.rows[i].file, t.rows[i].line, true
}

// readLines reads the line table of the object, or of its debug file;
// nil when neither has one.
func (o *Object) readLines() *lineTable {
	f, err := openELF(o.Path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if t := linesOf(f); t != nil {
		return t
	}
	dbg := o.DebugPath
	if dbg == "" {
		dbg = findDebugFile(f, o.Path, false)
	}
	if dbg == "" {
		return nil
	}
	df, err := openELF(dbg)
	if err != nil {
		return nil
	}
	defer df.Close()
	return linesOf(df)
}

// linesOf reads the rows of every compilation unit's line program.
func linesOf(f *elf.File) *lineTable {
	if s := f.Section(".debug_line"); s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	t := &lineTable{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			file := ""
			if le.File != nil {
				file = le.File.Name
			}
			t.rows = append(t.rows, lineRow{addr: le.Address, file: file, line: le.Line, end: le.EndSequence})
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	sort.SliceStable(t.rows, func(i, j int) bool { return t.rows[i].addr < t.rows[j].addr })
	return t
}

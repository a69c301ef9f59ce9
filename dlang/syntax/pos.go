package syntax

import (
	"fmt"
	"sort"
	"sync"
)

// Pos is a compact source position: an offset into the FileSet's address
// space. The zero Pos is NoPos. Every node and token carries one.
type Pos int

// NoPos is the zero value of Pos: no position known.
const NoPos Pos = 0

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p != NoPos }

// Position is a decoded Pos.
type Position struct {
	Filename string // as given to AddFile: a script path, or "" for -n text
	Offset   int    // byte offset, from 0
	Line     int    // from 1
	Column   int    // from 1, in bytes
}

// String formats a position as "file:line:column".
func (p Position) String() string {
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// File is one source in a FileSet.
type File struct {
	name  string
	base  int
	size  int
	mu    sync.Mutex
	lines []int // offsets of the first byte of each line
	// lineOffset is added to every line number, for text that does not
	// start on line 1 of its file (an interpreter file's #! line, cpp's
	// #line markers).
	lineOffset int
	// infos are the line directives (# 12 "file") seen in the text, by
	// increasing offset.
	infos []lineInfo
}

// lineInfo says that the line starting at Offset is line Line of Filename.
type lineInfo struct {
	Offset   int
	Filename string
	Line     int
}

// AddLineInfo records a line directive: the line that starts at offset is
// line `line` of filename ("" keeps the current name). Offsets must
// increase; the scanner calls it for cpp line markers.
func (f *File) AddLineInfo(offset int, filename string, line int) {
	f.mu.Lock()
	if n := len(f.infos); filename == "" && n > 0 {
		filename = f.infos[n-1].Filename
	}
	if n := len(f.infos); n == 0 || f.infos[n-1].Offset < offset {
		f.infos = append(f.infos, lineInfo{offset, filename, line})
	} else if f.infos[n-1].Offset == offset {
		f.infos[n-1] = lineInfo{offset, filename, line}
	}
	f.mu.Unlock()
}

// Name returns the file name given to AddFile.
func (f *File) Name() string { return f.name }

// Base returns the Pos of the file's first byte.
func (f *File) Base() int { return f.base }

// Size returns the file's size in bytes.
func (f *File) Size() int { return f.size }

// Pos returns the Pos of the byte at offset.
func (f *File) Pos(offset int) Pos { return Pos(f.base + offset) }

// Offset returns the byte offset of p within f.
func (f *File) Offset(p Pos) int { return int(p) - f.base }

// AddLine records that a line starts at offset. Offsets must increase.
func (f *File) AddLine(offset int) {
	f.mu.Lock()
	if n := len(f.lines); n == 0 || f.lines[n-1] < offset {
		f.lines = append(f.lines, offset)
	}
	f.mu.Unlock()
}

// SetLineOffset makes line numbers of f start at 1+n.
func (f *File) SetLineOffset(n int) { f.lineOffset = n }

// Position decodes p, which must lie within f.
func (f *File) Position(p Pos) Position {
	off := f.Offset(p)
	f.mu.Lock()
	i := sort.Search(len(f.lines), func(i int) bool { return f.lines[i] > off }) - 1
	col := off + 1
	if i >= 0 {
		col = off - f.lines[i] + 1
	}
	pos := Position{Filename: f.name, Offset: off, Line: i + 1 + f.lineOffset, Column: col}
	// The last line directive before off renumbers the lines after it.
	j := sort.Search(len(f.infos), func(j int) bool { return f.infos[j].Offset > off }) - 1
	if j >= 0 {
		info := f.infos[j]
		if info.Filename != "" {
			pos.Filename = info.Filename
		}
		k := sort.Search(len(f.lines), func(k int) bool { return f.lines[k] > info.Offset }) - 1
		pos.Line = info.Line + i - k
	}
	f.mu.Unlock()
	return pos
}

// FileSet holds the sources of one compilation: -s files, -n strings and
// preprocessor output. Positions of all of them share one address space.
type FileSet struct {
	mu    sync.Mutex
	base  int
	files []*File
}

// NewFileSet returns an empty FileSet.
func NewFileSet() *FileSet { return &FileSet{base: 1} }

// AddFile adds a source of the given size and returns it. Its lines are
// recorded by the scanner.
func (s *FileSet) AddFile(name string, size int) *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &File{name: name, base: s.base, size: size, lines: []int{0}}
	s.base += size + 1 // +1 so that the position at EOF is distinct
	s.files = append(s.files, f)
	return f
}

// File returns the file containing p, or nil.
func (s *FileSet) File(p Pos) *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.files), func(i int) bool { return s.files[i].base > int(p) }) - 1
	if i < 0 {
		return nil
	}
	f := s.files[i]
	if int(p) > f.base+f.size {
		return nil
	}
	return f
}

// Position decodes p; the zero Position if p is not in the set.
func (s *FileSet) Position(p Pos) Position {
	if f := s.File(p); f != nil {
		return f.Position(p)
	}
	return Position{}
}

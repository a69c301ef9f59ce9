package tracefs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Field is one field of an event record, as the format file describes it.
type Field struct {
	// Name is the field's name ("fd", "args").
	Name string
	// Type is the C type, without the name ("const char *"); an array
	// field has its dimension appended ("unsigned long[6]").
	Type string
	// Offset and Size are in bytes from the start of the record.
	Offset, Size int
	// Signed tells how the kernel prints the value.
	Signed bool
}

// Format is the layout of one event's record.
type Format struct {
	// Name is the event's name ("sys_enter_write").
	Name string
	// ID is the event id, the perf event config of the tracepoint.
	ID uint32
	// Common holds the fields every event starts with (common_type,
	// common_pid, ...).
	Common []Field
	// Fields holds the event's own fields, in record order.
	Fields []Field
}

// Field returns the named field (common fields included), or false.
func (f *Format) Field(name string) (Field, bool) {
	for _, fl := range f.Fields {
		if fl.Name == name {
			return fl, true
		}
	}
	for _, fl := range f.Common {
		if fl.Name == name {
			return fl, true
		}
	}
	return Field{}, false
}

// ReadFormat reads events/GROUP/EVENT/format under the tracefs root.
func ReadFormat(root, group, event string) (*Format, error) {
	if strings.ContainsAny(group+event, "/") || group == "" || event == "" || group[0] == '.' || event[0] == '.' {
		return nil, fmt.Errorf("tracefs: bad event name %q:%q", group, event)
	}
	fh, err := os.Open(filepath.Join(root, "events", group, event, "format"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := ParseFormat(fh)
	if err != nil {
		return nil, fmt.Errorf("tracefs: %s:%s: %w", group, event, err)
	}
	return f, nil
}

// ParseFormat parses the text of a format file. Fields before the first
// blank line of the format section are the common ones.
func ParseFormat(r io.Reader) (*Format, error) {
	f := &Format{}
	sc := bufio.NewScanner(r)
	inFormat, common := false, true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "name:"):
			f.Name = strings.TrimSpace(line[len("name:"):])
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[len("ID:"):]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("bad ID line %q", line)
			}
			f.ID = uint32(id)
		case strings.HasPrefix(line, "format:"):
			inFormat = true
		case strings.HasPrefix(line, "print fmt:"):
			inFormat = false
		case inFormat && strings.TrimSpace(line) == "":
			if len(f.Common) > 0 || len(f.Fields) > 0 {
				common = false
			}
		case inFormat:
			fl, err := parseField(line)
			if err != nil {
				return nil, err
			}
			if common {
				f.Common = append(f.Common, fl)
			} else {
				f.Fields = append(f.Fields, fl)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if f.Name == "" {
		return nil, fmt.Errorf("no name line")
	}
	return f, nil
}

// parseField parses
// "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;".
func parseField(line string) (Field, error) {
	var fl Field
	var decl string
	for _, part := range strings.Split(strings.TrimSpace(line), ";") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "field":
			decl = v
		case "offset":
			fl.Offset, err = strconv.Atoi(v)
		case "size":
			fl.Size, err = strconv.Atoi(v)
		case "signed":
			fl.Signed = v == "1"
		}
		if err != nil {
			return fl, fmt.Errorf("bad field line %q", line)
		}
	}
	if decl == "" {
		return fl, fmt.Errorf("bad field line %q", line)
	}
	typ, name, ok := splitDecl(decl)
	if !ok {
		return fl, fmt.Errorf("bad field declaration %q", decl)
	}
	fl.Type, fl.Name = typ, name
	return fl, nil
}

// splitDecl splits a C declaration of one field, "const char * buf" or
// "unsigned long args[6]" or "__data_loc char[] name", into its type and
// name.
func splitDecl(decl string) (typ, name string, ok bool) {
	decl = strings.TrimSpace(decl)
	dims := ""
	for strings.HasSuffix(decl, "]") {
		i := strings.LastIndexByte(decl, '[')
		if i < 0 {
			return "", "", false
		}
		dims = decl[i:] + dims
		decl = strings.TrimSpace(decl[:i])
	}
	i := len(decl)
	for i > 0 && isIdent(decl[i-1]) {
		i--
	}
	name = decl[i:]
	typ = strings.TrimSpace(decl[:i])
	if name == "" || typ == "" || name[0] >= '0' && name[0] <= '9' {
		return "", "", false
	}
	// "__data_loc char[] name": the brackets belong to the type.
	return typ + dims, name, true
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Events returns the events of a group in the order available_events
// lists them (the order in which the kernel registered them).
func Events(root, group string) ([]string, error) {
	fh, err := os.Open(filepath.Join(root, "available_events"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []string
	prefix := group + ":"
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), prefix); ok && ev != "" {
			out = append(out, ev)
		}
	}
	return out, sc.Err()
}

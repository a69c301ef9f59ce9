package perfetto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Summary is what Check counted in a trace-event file.
type Summary struct {
	// Slices counts the closed slices: B/E pairs and X events.
	Slices int
	// Instants counts the instant events, Metadata the M events.
	Instants, Metadata int
	// Tracks counts the threads (pid, tid) with events.
	Tracks int
	// Processes maps each pid to its process_name.
	Processes map[int]string
	// Events holds every event, in file order.
	Events []map[string]any
	// OtherData is the file's otherData object.
	OtherData map[string]any
}

// phases are the event phases Check accepts: those the renderer writes
// and the other common ones.
var phases = map[string]bool{"B": true, "E": true, "X": true, "i": true, "I": true, "M": true, "C": true}

// Check reads a trace-event file in the JSON object form and checks it
// against the format's rules: every event has a string name and phase,
// a number ts and integer pid and tid, typed optional fields (cat, s,
// dur, args); every E closes the innermost open B of its track, of the
// same name, and no slice is left open; on each track (pid, tid) the
// timestamps never go down, in file order.
func Check(data []byte) (*Summary, error) {
	var file map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON object")
	}
	raw, ok := file["traceEvents"]
	if !ok {
		return nil, fmt.Errorf("no traceEvents")
	}
	s := &Summary{Processes: map[int]string{}}
	if u, ok := file["displayTimeUnit"]; ok {
		var unit string
		if err := json.Unmarshal(u, &unit); err != nil || (unit != "ms" && unit != "ns") {
			return nil, fmt.Errorf("displayTimeUnit %s: not \"ms\" or \"ns\"", u)
		}
	}
	if o, ok := file["otherData"]; ok {
		if err := json.Unmarshal(o, &s.OtherData); err != nil {
			return nil, fmt.Errorf("otherData: %v", err)
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&s.Events); err != nil {
		return nil, fmt.Errorf("traceEvents: %v", err)
	}
	type key struct{ pid, tid int64 }
	last := map[key]float64{}
	open := map[key][]string{}
	for i, e := range s.Events {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("event %d (%v): %s", i, e, fmt.Sprintf(format, args...))
		}
		name, ok := e["name"].(string)
		if !ok || name == "" {
			return nil, bad("name is not a non-empty string")
		}
		ph, ok := e["ph"].(string)
		if !ok || !phases[ph] {
			return nil, bad("bad phase %v", e["ph"])
		}
		ts, ok := number(e["ts"])
		if !ok || ts < 0 {
			return nil, bad("ts is not a non-negative number")
		}
		pid, ok1 := integer(e["pid"])
		tid, ok2 := integer(e["tid"])
		if !ok1 || !ok2 {
			return nil, bad("pid or tid is not an integer")
		}
		if c, ok := e["cat"]; ok {
			if _, ok := c.(string); !ok {
				return nil, bad("cat is not a string")
			}
		}
		if a, ok := e["args"]; ok {
			if _, ok := a.(map[string]any); !ok {
				return nil, bad("args is not an object")
			}
		}
		if sc, ok := e["s"]; ok {
			if v, _ := sc.(string); (ph != "i" && ph != "I") || (v != "g" && v != "p" && v != "t") {
				return nil, bad("bad scope %v", sc)
			}
		}
		k := key{pid, tid}
		if ph == "M" {
			// Metadata names a track; its time means nothing.
			args, _ := e["args"].(map[string]any)
			n, ok := args["name"].(string)
			if !ok {
				return nil, bad("metadata without a string args.name")
			}
			if name == "process_name" {
				s.Processes[int(pid)] = n
			}
			s.Metadata++
			continue
		}
		if t, seen := last[k]; seen && ts < t {
			return nil, bad("ts %v before the track's previous %v", ts, t)
		}
		last[k] = ts
		switch ph {
		case "B":
			open[k] = append(open[k], name)
		case "E":
			st := open[k]
			if len(st) == 0 {
				return nil, bad("E without an open B")
			}
			if st[len(st)-1] != name {
				return nil, bad("E of %q closes %q", name, st[len(st)-1])
			}
			open[k] = st[:len(st)-1]
			s.Slices++
		case "X":
			if dur, ok := number(e["dur"]); !ok || dur < 0 {
				return nil, bad("X without a non-negative dur")
			}
			s.Slices++
		case "i", "I":
			s.Instants++
		}
	}
	for k, st := range open {
		if len(st) > 0 {
			return nil, fmt.Errorf("track pid %d tid %d: %d slices left open (%v)", k.pid, k.tid, len(st), st)
		}
	}
	s.Tracks = len(last)
	return s, nil
}

// CheckFile is Check of the file at path.
func CheckFile(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Check(data)
}

// number reads a JSON number.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil && !math.IsInf(f, 0)
}

// integer reads a JSON number that is an integer.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

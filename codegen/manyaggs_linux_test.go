//go:build linux

package codegen

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// TestManyAggregations: a program of more aggregations than a BPF
// program may name maps (multiaggs/tst.many has 247 in one clause)
// reaches their hashes through arrays of maps, one per key and value
// size, and every update lands in its aggregation's own hash.
func TestManyAggregations(t *testing.T) {
	const n = 70
	var b strings.Builder
	b.WriteString("BEGIN {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\t@s%d[arg0] = sum(arg1 + %d);\n", i, i)
	}
	b.WriteString("\t@q = quantize(arg1);\n\t@c[arg0, arg1] = count();\n}\n")
	spec := compileD(t, b.String(), Options{})
	arrays := 0
	for _, ms := range spec.Maps {
		if strings.HasPrefix(ms.Name, abi.MapAggMapsPrefix) {
			arrays++
			if ms.Kind != program.MapArrayOfMaps || int(ms.MaxEntries) != len(ms.Inner) {
				t.Errorf("%s: kind %d, %d entries for %d maps", ms.Name, ms.Kind, ms.MaxEntries, len(ms.Inner))
			}
		}
	}
	if arrays != 3 {
		t.Errorf("%d arrays of aggregation hashes, want 3 (sum by one key, quantize, count by two)", arrays)
	}
	for _, a := range spec.Aggs {
		if a.Cache != "" {
			t.Errorf("@%s has a front cache", a.Name)
		}
	}
	r := loadSpec(t, spec)
	r.fire(t, 7, 100)
	r.fire(t, 7, 1)
	total := func(a *program.AggSpec, key []byte) uint64 {
		var vals [][]byte
		if err := r.maps[a.Map].Lookup(key, &vals); err != nil {
			t.Fatalf("@%s: %v", a.Name, err)
		}
		var sum uint64
		for _, v := range vals {
			sum += binary.LittleEndian.Uint64(v)
		}
		return sum
	}
	key := make([]byte, 8)
	binary.LittleEndian.PutUint64(key, 7)
	checked := 0
	for _, a := range spec.Aggs {
		var i int
		if _, err := fmt.Sscanf(a.Name, "s%d", &i); err != nil {
			continue
		}
		checked++
		if got, want := total(a, key), uint64(101+2*i); got != want {
			t.Errorf("@%s[7] = %d, want %d", a.Name, got, want)
		}
	}
	if checked != n {
		t.Errorf("checked %d sums, want %d", checked, n)
	}
}

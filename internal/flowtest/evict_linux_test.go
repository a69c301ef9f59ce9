package flowtest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
)

// With flowsize=64, 1,000 children one after another each set flow->k
// (k = 1..1000) and stop; once all are stopped they go on oldest first
// and show their flow->k. The newest keep theirs; older ones were
// evicted to make room, and the flow variable drops reported at the end
// (made - deleted - still there) are exactly the children that lost
// theirs.
func TestEviction(t *testing.T) {
	const n, size = 1000, 64
	p := build(t, "flowevict")[0]
	out, stderr := tracetest.TraceStderr(t, fmt.Sprintf(`#pragma D option quiet
#pragma D option flowsize=%d
syscall::getppid:entry /execname == "flowevict"/ { flow->k = ++n; }
syscall::getsid:entry /execname == "flowevict"/ { printf("%%d\n", flow->k); }
`, size), run(t, fmt.Sprintf("%s evict %d", p, n)))
	rows := ints(t, out)
	if len(rows) != n {
		t.Fatalf("%d children showed their flow, want %d", len(rows), n)
	}
	var kept []int64
	seen := map[int64]bool{}
	for _, r := range rows {
		if k := r[0]; k != 0 {
			if k < 0 || k > n || seen[k] {
				t.Fatalf("flow->k %d: out of 1..%d or twice", k, n)
			}
			seen[k] = true
			kept = append(kept, k)
		}
	}
	lost := n - len(kept)
	sort.Slice(kept, func(i, j int) bool { return kept[i] < kept[j] })
	t.Logf("%d children kept their flow (flowsize %d): %v", len(kept), size, kept)
	// The table's LRU list is shared by the CPUs, each of which keeps a
	// few free entries for itself: some older entries go before it is
	// full and a few stay (measured: 28 to 38 newest in a row kept).
	if len(kept) > size {
		t.Errorf("%d flows kept, more than flowsize %d", len(kept), size)
	}
	for k := int64(n - size/4 + 1); k <= n; k++ {
		if !seen[k] {
			t.Errorf("child %d of the newest %d lost its flow; kept: %v", k, size/4, kept)
		}
	}
	m := regexp.MustCompile(`dtrace: (\d+) flow variable drops?\n`).FindAllStringSubmatch(stderr, -1)
	drops := 0
	for _, d := range m {
		c, _ := strconv.Atoi(d[1])
		drops += c
	}
	if drops != lost {
		t.Errorf("%d flow variable drops reported, want %d (the children that lost their flow); stderr:\n%s", drops, lost, stderr)
	}
}

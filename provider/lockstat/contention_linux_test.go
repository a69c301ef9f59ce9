package lockstat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// TestRWBlock: goroutines that make and remove directories in one
// directory wait for its inode's rw-semaphore as writers, so
// lockstat:::rw-block fires with a lock, a time blocked and the writer
// kind (0). It runs on whatever lockstat this kernel offers: the rwsem
// slow paths' kprobes, or (without kprobes) the contention tracepoints.
func TestRWBlock(t *testing.T) {
	dir := t.TempDir()
	out := ktracetest.Run(t, `
lockstat:::rw-block
/args[2] == 0/
{
	@n = count();
	@lock = min(args[0] != 0);
	@max = max(args[1]);
	@min = min(args[1]);
}
tick-2s { printa("%@d ", @n); printa("%@d ", @lock); printa("%@d ", @min); printa("%@d\n", @max); exit(0); }
`, 20*time.Second, func() { contend(t, dir, 2500*time.Millisecond) })
	var n, lock, lo, hi int64
	if _, err := fmt.Sscan(strings.TrimSpace(out), &n, &lock, &lo, &hi); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if n == 0 || lock != 1 {
		t.Fatalf("rw-block fired %d times for writers (every lock non-NULL: %d), want some: %q", n, lock, out)
	}
	if lo <= 0 || hi > int64(10*time.Second) {
		t.Errorf("rw-block times %d..%d ns, want more than 0 and under 10 s", lo, hi)
	}
	t.Logf("rw-block (writer) fired %d times, %d..%d ns", n, lo, hi)
}

// contend makes and removes directories in dir from eight goroutines
// for d.
func contend(t *testing.T, dir string, d time.Duration) {
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				p := filepath.Join(dir, fmt.Sprintf("d%d.%d", g, i))
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Error(err)
					return
				}
				if err := os.Remove(p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

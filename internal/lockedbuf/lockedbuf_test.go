package lockedbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("ab"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if b.Len() != 1600 || b.String() != strings.Repeat("ab", 800) {
		t.Errorf("Len %d, String %q", b.Len(), b.String())
	}
}

func TestLimit(t *testing.T) {
	b := Buffer{Limit: 5}
	for _, s := range []string{"abc", "def", "gh"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if b.String() != "abcde" || b.Len() != 5 {
		t.Errorf("kept %q (%d bytes), want \"abcde\"", b.String(), b.Len())
	}
}

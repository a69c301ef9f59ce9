//go:build linux

package usdt_test

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/provider/usdt"
)

const pgBin = "/usr/lib/postgresql/15/bin"

// cluster is a PostgreSQL cluster of its own in a temporary directory,
// reachable only through a Unix socket in that directory.
type cluster struct {
	dir, sock string
	port      int
	cred      *syscall.Credential
}

// asPostgres runs a PostgreSQL program as the postgres user.
func (c *cluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(pgBin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin, "postgres")); err != nil {
		t.Fatalf("PostgreSQL 15 is not installed: %v", err)
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "dtrace-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, sock: dir, port: 40000 + os.Getpid()%20000,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	c.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync")
	c.run(t, "pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "log"), "-w",
		"-o", fmt.Sprintf("-k %s -p %d -c listen_addresses=''", dir, c.port), "start")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(pgBin, "pg_ctl"), "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
		cmd.Run()
	})
	return c
}

// TestPostgreSQL counts the queries of psql sessions started after
// tracing began, in backends the postmaster forks for them, with
// postgresql*:::query-start (a semaphore-guarded probe).
func TestPostgreSQL(t *testing.T) {
	c := startCluster(t)
	const n = 25
	queries := []string{"SELECT 41 + 1;", "SELECT 'dtrace';"}
	var script strings.Builder
	for i := 0; i < n; i++ {
		for _, q := range queries {
			script.WriteString(q + "\n")
		}
	}
	file := filepath.Join(c.dir, "queries.sql")
	if err := os.WriteFile(file, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pv := tracetest.Named(usdt.New(nil), "postgresql")
	lines := trace(t, 0, `postgresql*:::query-start { @[copyinstr(arg0)] = count(); }`, func() {
		c.run(t, "psql", "-X", "-q", "-h", c.sock, "-p", strconv.Itoa(c.port), "-d", "postgres", "-f", file)
	}, pv)
	counts := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			continue
		}
		counts[strings.Join(f[:len(f)-1], " ")] = v
	}
	for _, q := range queries {
		if counts[q] != n {
			t.Errorf("query %q counted %d times, want %d; output:\n%s", q, counts[q], n, strings.Join(lines, "\n"))
		}
	}
}

package prom

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/dtrace-go/dtrace/internal/testutil/testcert"
)

// TestWebConfig reads web configuration files as Prometheus exporters
// do and refuses what it does not implement or cannot load.
func TestWebConfig(t *testing.T) {
	dir := t.TempDir()
	testcert.Write(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, yml, err string
	}{
		{"users", fmt.Sprintf("basic_auth_users:\n  alice: %s\n", hash), ""},
		{"tls", "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  min_version: TLS12\n", ""},
		{"mtls", "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  client_ca_file: ca.pem\n  client_auth_type: RequireAndVerifyClientCert\n", ""},
		{"empty", "http_server_config:\n  http2: false\n", "neither tls_server_config nor basic_auth_users"},
		{"plainhash", "basic_auth_users:\n  alice: pw\n", "alice"},
		{"unknown", "rate_limit:\n  interval: 1s\n", "rate_limit"},
		{"nokey", "tls_server_config:\n  cert_file: server.pem\n", "no key"},
		{"badversion", "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  min_version: TLS9\n", "TLS9"},
		{"canoauth", "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  client_ca_file: ca.pem\n", "client_auth_type"},
		{"cipher", "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "cipher"},
	} {
		f := filepath.Join(dir, c.name+".yml")
		if err := os.WriteFile(f, []byte(c.yml), 0o600); err != nil {
			t.Fatal(err)
		}
		err := CheckWebConfig(f)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	if CheckWebConfig(filepath.Join(dir, "missing.yml")) == nil {
		t.Errorf("a missing file accepted")
	}
}

// TestBasicAuth: requests without the right credentials get 401 and a
// challenge; a changed file's users apply to the next request.
func TestBasicAuth(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "web.yml")
	users := func(pw string) {
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(fmt.Sprintf("basic_auth_users:\n  alice: %s\n", hash)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	users("one")
	h := &authHandler{file: f, h: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })}
	code := func(user, pw string, auth bool) int {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth {
			req.SetBasicAuth(user, pw)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("401 without a challenge")
		}
		return w.Code
	}
	for _, c := range []struct {
		user, pw string
		auth     bool
		want     int
	}{{"", "", false, 401}, {"alice", "two", true, 401}, {"bob", "one", true, 401}, {"alice", "one", true, 200}, {"alice", "one", true, 200}} {
		if got := code(c.user, c.pw, c.auth); got != c.want {
			t.Errorf("%s:%s: %d, want %d", c.user, c.pw, got, c.want)
		}
	}
	users("two")
	if code("alice", "one", true) != 401 || code("alice", "two", true) != 200 {
		t.Errorf("the changed password did not apply")
	}
}

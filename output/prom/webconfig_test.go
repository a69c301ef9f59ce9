package prom

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestWebConfig reads web configuration files as Prometheus exporters
// do and refuses what it does not implement or cannot load.
func TestWebConfig(t *testing.T) {
	dir := t.TempDir()
	writeTLSFilesTo(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, yml, err string
	}{
		{"users", fmt.Sprintf("basic_auth_users:\n  alice: %s\n", hash), ""},
		{"tls", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS12\n", ""},
		{"mtls", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n", ""},
		{"empty", "http_server_config:\n  http2: false\n", "neither tls_server_config nor basic_auth_users"},
		{"plainhash", "basic_auth_users:\n  alice: pw\n", "alice"},
		{"unknown", "rate_limit:\n  interval: 1s\n", "rate_limit"},
		{"nokey", "tls_server_config:\n  cert_file: server.crt\n", "no key"},
		{"badversion", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS9\n", "TLS9"},
		{"canoauth", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n", "client_auth_type"},
		{"cipher", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "cipher"},
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

// writeTLSFilesTo writes a CA (ca.crt) and a server certificate it signed
// for 127.0.0.1 (server.crt, server.key) into dir, and returns the CA's
// PEM.
func writeTLSFilesTo(t *testing.T, dir string) []byte {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, srvKey := key(), key()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dtrace test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for name, data := range map[string][]byte{
		"ca.crt":     caPEM,
		"server.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		"server.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caPEM
}

package prom

// The web configuration file every Prometheus exporter takes
// (--web.config.file, the format of prometheus/exporter-toolkit's web
// package, documented in Prometheus's "HTTPS and authentication" page):
// tls_server_config, http_server_config and basic_auth_users. It is read
// here rather than through the toolkit because the toolkit's dependencies
// link text/template, which turns off the linker's pruning of unused
// methods: it made the dtrace binary 4.6 MB larger (19.7 to 24.3 MB);
// this reader adds a YAML decoder and bcrypt.

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"
)

// webConfig is the file's content. Unknown keys are refused, so that a
// setting this reader does not implement (rate_limit) is never silently
// ignored.
type webConfig struct {
	TLS struct {
		Cert          string   `yaml:"cert"`
		Key           string   `yaml:"key"`
		CertFile      string   `yaml:"cert_file"`
		KeyFile       string   `yaml:"key_file"`
		ClientCA      string   `yaml:"client_ca"`
		ClientCAFile  string   `yaml:"client_ca_file"`
		ClientAuth    string   `yaml:"client_auth_type"`
		Ciphers       []string `yaml:"cipher_suites"`
		Curves        []string `yaml:"curve_preferences"`
		MinVersion    string   `yaml:"min_version"`
		MaxVersion    string   `yaml:"max_version"`
		PreferServer  bool     `yaml:"prefer_server_cipher_suites"` // accepted; Go chooses
		AllowedSANs   []string `yaml:"client_allowed_sans"`
		configuredDir string
	} `yaml:"tls_server_config"`
	HTTP struct {
		HTTP2   *bool             `yaml:"http2"`
		Headers map[string]string `yaml:"headers"`
	} `yaml:"http_server_config"`
	Users map[string]string `yaml:"basic_auth_users"`
}

// tlsOn reports whether the file configures TLS.
func (c *webConfig) tlsOn() bool {
	t := &c.TLS
	return t.Cert != "" || t.Key != "" || t.CertFile != "" || t.KeyFile != "" ||
		t.ClientCA != "" || t.ClientCAFile != "" || t.ClientAuth != ""
}

// readWebConfig reads and checks the file: its YAML, its certificate and
// key, client CA and TLS settings, and that each user's password is a
// bcrypt hash.
func readWebConfig(file string) (*webConfig, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c := &webConfig{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	// Relative paths are relative to the file, as the toolkit has them.
	c.TLS.configuredDir = filepath.Dir(file)
	for user, hash := range c.Users {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("%s: basic_auth_users: %s: %v", file, user, err)
		}
	}
	if c.tlsOn() {
		if _, err := c.tlsConfig(); err != nil {
			return nil, fmt.Errorf("%s: tls_server_config: %v", file, err)
		}
	}
	return c, nil
}

// path resolves a file name of the TLS settings.
func (c *webConfig) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.TLS.configuredDir, p)
}

// certificate loads the server's certificate and key.
func (c *webConfig) certificate() (*tls.Certificate, error) {
	t := &c.TLS
	read := func(inline, file, what string) ([]byte, error) {
		switch {
		case inline != "" && file != "":
			return nil, fmt.Errorf("both %s and %s_file are set", what, what)
		case file != "":
			return os.ReadFile(c.path(file))
		case inline == "":
			return nil, fmt.Errorf("no %s or %s_file", what, what)
		}
		return []byte(inline), nil
	}
	cert, err := read(t.Cert, t.CertFile, "cert")
	if err != nil {
		return nil, err
	}
	key, err := read(t.Key, t.KeyFile, "key")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	return &pair, nil
}

var (
	tlsVersions = map[string]uint16{"TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11,
		"TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}
	clientAuths = map[string]tls.ClientAuthType{"": tls.NoClientCert, "NoClientCert": tls.NoClientCert,
		"RequestClientCert": tls.RequestClientCert, "RequireAnyClientCert": tls.RequireAnyClientCert,
		"RequireClientCert": tls.RequireAnyClientCert, "VerifyClientCertIfGiven": tls.VerifyClientCertIfGiven,
		"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert}
	curves = map[string]tls.CurveID{"CurveP256": tls.CurveP256, "CurveP384": tls.CurveP384,
		"CurveP521": tls.CurveP521, "X25519": tls.X25519, "X25519MLKEM768": tls.X25519MLKEM768}
)

// tlsConfig is the server's TLS configuration; its certificate is read
// again at every handshake, so that a renewed one is served without a
// restart.
func (c *webConfig) tlsConfig() (*tls.Config, error) {
	t := &c.TLS
	if _, err := c.certificate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.certificate() }}
	var ok bool
	if cfg.ClientAuth, ok = clientAuths[t.ClientAuth]; !ok {
		return nil, fmt.Errorf("unknown client_auth_type %q", t.ClientAuth)
	}
	for _, v := range []struct {
		name string
		to   *uint16
	}{{t.MinVersion, &cfg.MinVersion}, {t.MaxVersion, &cfg.MaxVersion}} {
		if v.name == "" {
			continue
		}
		if *v.to, ok = tlsVersions[v.name]; !ok {
			return nil, fmt.Errorf("unknown TLS version %q", v.name)
		}
	}
	for _, name := range t.Ciphers {
		i := slices.IndexFunc(tls.CipherSuites(), func(s *tls.CipherSuite) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown or insecure cipher suite %q", name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, tls.CipherSuites()[i].ID)
	}
	for _, name := range t.Curves {
		id, ok := curves[name]
		if !ok {
			return nil, fmt.Errorf("unknown curve %q", name)
		}
		cfg.CurvePreferences = append(cfg.CurvePreferences, id)
	}
	if t.ClientCA != "" || t.ClientCAFile != "" {
		pem := []byte(t.ClientCA)
		if t.ClientCAFile != "" {
			var err error
			if pem, err = os.ReadFile(c.path(t.ClientCAFile)); err != nil {
				return nil, err
			}
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, errors.New("no certificate in the client CA")
		}
		if cfg.ClientAuth == tls.NoClientCert {
			return nil, errors.New("a client CA without a client_auth_type that asks for certificates")
		}
	}
	if len(t.AllowedSANs) > 0 {
		cfg.VerifyPeerCertificate = func(_ [][]byte, chains [][]*x509.Certificate) error {
			for _, chain := range chains {
				if len(chain) > 0 && slices.ContainsFunc(t.AllowedSANs, func(san string) bool {
					leaf := chain[0]
					return slices.Contains(leaf.DNSNames, san) || slices.Contains(leaf.EmailAddresses, san) ||
						slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.String() == san }) ||
						slices.ContainsFunc(leaf.URIs, func(u *url.URL) bool { return u.String() == san })
				}) {
					return nil
				}
			}
			return errors.New("the client certificate has no allowed SAN")
		}
	}
	return cfg, nil
}

// authHandler serves h to requests whose basic-auth credentials match
// the file's users (all requests when it has none), adding the file's
// headers. The file is read again when it changes, so that users can be
// changed without a restart.
type authHandler struct {
	file string
	h    http.Handler

	mu    sync.Mutex
	stamp []byte // the file's content last read
	conf  *webConfig
	// good caches credentials bcrypt accepted (a hash of user, password
	// and the hash they matched): bcrypt takes tens of milliseconds by
	// design, too long for every scrape.
	good map[[32]byte]bool
}

// config is the file's configuration as it stands, or the last good one
// when it no longer reads.
func (a *authHandler) config() *webConfig {
	a.mu.Lock()
	defer a.mu.Unlock()
	data, err := os.ReadFile(a.file)
	if err == nil && !bytes.Equal(data, a.stamp) {
		if c, err := readWebConfig(a.file); err == nil {
			a.conf, a.stamp, a.good = c, data, map[[32]byte]bool{}
		}
	}
	return a.conf
}

// allowed checks the request's credentials.
func (a *authHandler) allowed(c *webConfig, r *http.Request) bool {
	if len(c.Users) == 0 {
		return true
	}
	user, pass, ok := r.BasicAuth()
	hash, known := c.Users[user]
	if !ok || !known {
		// Spend bcrypt's time anyway, so that timing does not tell
		// which users exist.
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(pass))
		return false
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass + "\x00" + hash))
	a.mu.Lock()
	good := a.good[key]
	a.mu.Unlock()
	if good {
		return true
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) != nil {
		return false
	}
	a.mu.Lock()
	if len(a.good) > 100 {
		a.good = map[[32]byte]bool{}
	}
	a.good[key] = true
	a.mu.Unlock()
	return true
}

// dummyHash is a bcrypt hash no password is compared with in earnest.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("dtrace"), bcrypt.DefaultCost)
	return h
})

// ServeHTTP checks the credentials, then serves.
func (a *authHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := a.config()
	for k, v := range c.HTTP.Headers {
		w.Header().Set(k, v)
	}
	if !a.allowed(c, r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="dtrace"`)
		http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
		return
	}
	a.h.ServeHTTP(w, r)
}

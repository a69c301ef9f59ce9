package symbol

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dtrace-go/dtrace/internal/cnum"
)

// debuginfod fetches debug files by build id from the servers that
// DEBUGINFOD_URLS names, and keeps them where elfutils' client keeps
// them (<cache>/<build id>/debuginfo), so that gdb, perf, eu-stack and
// dtrace share one cache. The environment is read as elfutils reads it;
// where elfutils would wait without a bound, dtrace does not (see
// docs/STACKS.md).
type debuginfod struct {
	urls []string // each ending in "/buildid"
	// cache is the cache directory.
	cache string
	// timeout is DEBUGINFOD_TIMEOUT: a transfer that brings less than
	// 100 KiB in any such period (waiting for the answer included) is
	// dropped, and its server asked no more.
	timeout time.Duration
	maxTime time.Duration // DEBUGINFOD_MAXTIME: one fetch in all; 0 none
	maxSize int64         // DEBUGINFOD_MAXSIZE: 0 none
	retries int           // DEBUGINFOD_RETRY_LIMIT
	client  *http.Client

	cleanOnce sync.Once
	mu        sync.Mutex
	fetches   map[string]*fetch // by build id
	dead      map[string]bool   // servers that failed: not asked again
}

// fetch is one build id's fetch: done is closed when it has ended, path
// then holds the cached file or "".
type fetch struct {
	done chan struct{}
	path string
}

// Defaults of elfutils' client.
const (
	debuginfodTimeout  = 90 * time.Second
	debuginfodRetries  = 2
	lowSpeedBytes      = 100 << 10
	cacheCleanInterval = 86400
	cacheMaxUnusedAge  = 604800
	cacheMissSeconds   = 600
)

var (
	debuginfodOnce   sync.Once
	debuginfodClient *debuginfod
)

// defaultDebuginfod returns the client the environment configures, nil
// when DEBUGINFOD_URLS names no server.
func defaultDebuginfod() *debuginfod {
	debuginfodOnce.Do(func() { debuginfodClient = newDebuginfod(os.Getenv) })
	return debuginfodClient
}

// newDebuginfod reads the client's settings through getenv; nil when
// there is no server to ask.
func newDebuginfod(getenv func(string) string) *debuginfod {
	d := &debuginfod{fetches: map[string]*fetch{}, dead: map[string]bool{}}
	seen := map[string]bool{}
	// elfutils splits the list at spaces and appends "buildid" to each
	// URL, with a slash unless it ends in one.
	for _, u := range strings.Fields(getenv("DEBUGINFOD_URLS")) {
		if strings.HasSuffix(u, "/") && len(u) > 1 {
			u += "buildid"
		} else {
			u += "/buildid"
		}
		if !seen[u] {
			seen[u] = true
			d.urls = append(d.urls, u)
		}
	}
	if len(d.urls) == 0 {
		return nil
	}
	d.cache = cacheDir(getenv)
	d.timeout = debuginfodTimeout
	if v := getenv("DEBUGINFOD_TIMEOUT"); v != "" {
		// elfutils takes 0 or less as no limit at all; dtrace keeps its
		// default then, as it never waits without a bound.
		if n := cnum.Atol(v); n > 0 {
			d.timeout = time.Duration(n) * time.Second
		}
	}
	if n := cnum.Atol(getenv("DEBUGINFOD_MAXTIME")); n > 0 {
		d.maxTime = time.Duration(n) * time.Second
	}
	d.maxSize = max(cnum.Atol(getenv("DEBUGINFOD_MAXSIZE")), 0)
	d.retries = debuginfodRetries
	if v := getenv("DEBUGINFOD_RETRY_LIMIT"); v != "" {
		d.retries = int(max(cnum.Atol(v), 0))
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.RegisterProtocol("file", http.NewFileTransport(http.Dir("/")))
	d.client = &http.Client{Transport: t}
	return d
}

// cacheDir is elfutils' cache directory: DEBUGINFOD_CACHE_PATH; else
// ~/.debuginfod_client_cache if it exists; else debuginfod_client under
// XDG_CACHE_HOME or ~/.cache ("/" standing for an unset HOME).
func cacheDir(getenv func(string) string) string {
	if p := getenv("DEBUGINFOD_CACHE_PATH"); p != "" {
		return p
	}
	home := getenv("HOME")
	if home == "" {
		home = "/"
	}
	if old := filepath.Join(home, ".debuginfod_client_cache"); fileExists(old) {
		return old
	}
	xdg := getenv("XDG_CACHE_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".cache")
	}
	return filepath.Join(xdg, "debuginfod_client")
}

// find returns the debug file of the object at path with build id id
// (hex), from the cache or the servers; "" when no server has it, or the
// file is not that object's.
func (d *debuginfod) find(id, path string) string {
	f := d.start(id)
	<-f.done
	raw, err := hex.DecodeString(id)
	if f.path == "" || err != nil || !sameBuildID(f.path, raw) {
		return ""
	}
	return f.path
}

// start begins the fetch of build id id in the background unless one has
// begun already, and returns it.
func (d *debuginfod) start(id string) *fetch {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.fetches[id]; f != nil {
		return f
	}
	f := &fetch{done: make(chan struct{})}
	d.fetches[id] = f
	go func() {
		defer close(f.done)
		f.path = d.get(id)
	}()
	return f
}

var (
	errNotFound = errors.New("not found")
	errTooLarge = errors.New("larger than DEBUGINFOD_MAXSIZE")
	errNoAnswer = errors.New("no answer")
)

// get returns the cached debug file of id, fetching it first if need be.
func (d *debuginfod) get(id string) string {
	if len(id) < 2 || len(id) > 128 || strings.Trim(id, "0123456789abcdef") != "" {
		return ""
	}
	if err := d.initCache(); err != nil {
		return ""
	}
	d.cleanOnce.Do(d.clean)
	dir := filepath.Join(d.cache, id)
	target := filepath.Join(dir, "debuginfo")
	if fi, err := os.Stat(target); err == nil {
		if fi.Mode().Perm() != 0 {
			return target
		}
		// An empty file of mode 000 records that no server had it.
		miss := d.config("cache_miss_s", cacheMissSeconds)
		if time.Since(fi.ModTime()) <= time.Duration(miss)*time.Second {
			return ""
		}
		os.Remove(target)
	}
	for try := 0; ; try++ {
		err := d.query(id, dir, target)
		switch {
		case err == nil:
			return target
		case errors.Is(err, errNotFound):
			os.Mkdir(dir, 0o700)
			if f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL, 0); err == nil {
				f.Close()
			}
			return ""
		case errors.Is(err, errTooLarge), errors.Is(err, errNoAnswer), try >= d.retries:
			return ""
		}
	}
}

// query asks every server still answering for id at once and writes the
// first that has it into the cache (a temporary file renamed to target,
// made read-only, dated as the server dates it). errNotFound means no
// server has it.
func (d *debuginfod) query(id, dir, target string) error {
	urls := d.live()
	if len(urls) == 0 {
		return errNoAnswer
	}
	// Leaving cancels the requests that lost.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if d.maxTime > 0 {
		ctx, cancel = context.WithTimeout(ctx, d.maxTime)
		defer cancel()
	}
	type answer struct {
		url  string
		resp *http.Response
		err  error
		prog *progress
	}
	answers := make(chan answer, len(urls))
	for _, u := range urls {
		go func() {
			p := newProgress(ctx, d.timeout)
			resp, err := d.request(p.ctx, u+"/"+id+"/debuginfo")
			if err != nil {
				err = p.explain(err)
				p.stop()
			}
			answers <- answer{u, resp, err, p}
		}()
	}
	err := errNotFound
	for range urls {
		a := <-answers
		if a.err != nil {
			d.fail(a.url, a.err)
			if err == errNotFound {
				err = errNoAnswer
			}
			continue
		}
		if a.resp.StatusCode == http.StatusOK {
			defer a.prog.stop()
			defer a.resp.Body.Close()
			if d.maxSize > 0 && a.resp.ContentLength > d.maxSize {
				return errTooLarge
			}
			if err := d.save(a.resp.Body, a.resp.Header, a.prog, dir, target); err != nil {
				d.fail(a.url, a.prog.explain(err))
				return errNoAnswer
			}
			return nil
		}
		a.resp.Body.Close()
		a.prog.stop()
		switch a.resp.StatusCode {
		case http.StatusNotFound:
		case http.StatusNotAcceptable: // elfutils: the file exceeds MAXSIZE
			err = errTooLarge
		default:
			if err == errNotFound {
				err = fmt.Errorf("%s: %s", a.url, a.resp.Status)
			}
		}
	}
	return err
}

// request sends one GET with elfutils' headers.
func (d *debuginfod) request(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "dtrace-go/0,"+userAgentSystem)
	if d.maxSize > 0 {
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", strconv.FormatInt(d.maxSize, 10))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == 0 { // file:// answers without a status
		resp.StatusCode = http.StatusOK
	}
	return resp, nil
}

var userAgentSystem = "Linux/" + map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]

// save copies body into a temporary file beside target and renames it
// there once whole.
func (d *debuginfod) save(body io.Reader, h http.Header, p *progress, dir, target string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	tmp, err := os.CreateTemp(dir, "debuginfo.")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
			os.Remove(dir) // only if empty
		}
	}()
	limit := int64(maxDebugFile)
	if d.maxSize > 0 {
		limit = d.maxSize
	}
	n, err := io.Copy(tmp, io.LimitReader(p.reader(body), limit+1))
	if err != nil {
		return err
	}
	if n > limit {
		return errTooLarge
	}
	if err := tmp.Chmod(0o400); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if t, err := http.ParseTime(h.Get("Last-Modified")); err == nil {
		os.Chtimes(tmp.Name(), t, t)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	ok = true
	return nil
}

// live returns the servers not known to fail.
func (d *debuginfod) live() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, u := range d.urls {
		if !d.dead[u] {
			out = append(out, u)
		}
	}
	return out
}

// fail records that server u failed (not answering in time, refusing
// the connection): it is not asked again in this run, and the one
// message about it is printed.
func (d *debuginfod) fail(u string, err error) {
	d.mu.Lock()
	first := !d.dead[u]
	d.dead[u] = true
	d.mu.Unlock()
	if !first {
		return
	}
	server := strings.TrimSuffix(u, "/buildid")
	if errors.Is(err, errNoAnswer) {
		warnf("debuginfod server %s did not answer within %v; names it could give are missing", server, d.timeout)
		return
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	warnf("debuginfod server %s failed: %v; names it could give are missing", server, err)
}

// initCache makes the cache directory and the configuration files
// elfutils keeps in it.
func (d *debuginfod) initCache() error {
	if parent := filepath.Dir(d.cache); !fileExists(parent) {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return err
		}
	}
	if err := os.Mkdir(d.cache, 0o777); err != nil && !os.IsExist(err) {
		return err
	}
	d.config("cache_clean_interval_s", cacheCleanInterval)
	d.config("max_unused_age_s", cacheMaxUnusedAge)
	return nil
}

// config reads a number from the cache's configuration file name,
// writing def there first if the file does not exist.
func (d *debuginfod) config(name string, def int64) int64 {
	p := filepath.Join(d.cache, name)
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		os.WriteFile(p, []byte(strconv.FormatInt(def, 10)), 0o666)
		return def
	}
	if s := strings.TrimSpace(string(b)); err == nil && s != "" && strings.Trim(s, "0123456789") == "" {
		return cnum.Atol(s)
	}
	return def
}

// Compiled when first used, not at package init: every start-up pays for init.
var cacheEntry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`.*/[a-f0-9]+(/debuginfo|/executable|/source.*|)$`) })

// clean removes, once a cache_clean_interval_s, the cached files not
// used for max_unused_age_s and the build-id directories left empty, as
// elfutils' client does.
func (d *debuginfod) clean() {
	interval := filepath.Join(d.cache, "cache_clean_interval_s")
	fi, err := os.Stat(interval)
	if err != nil || time.Since(fi.ModTime()) < time.Duration(d.config("cache_clean_interval_s", cacheCleanInterval))*time.Second {
		return
	}
	maxAge := time.Duration(d.config("max_unused_age_s", cacheMaxUnusedAge)) * time.Second
	now := time.Now()
	var dirs []string
	filepath.WalkDir(d.cache, func(p string, e os.DirEntry, err error) error {
		if err != nil || p == d.cache || !cacheEntry().MatchString(p) {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if now.Sub(info.ModTime()) >= maxAge {
				dirs = append(dirs, p)
			}
			return nil
		}
		if info.Mode().IsRegular() && now.Sub(accessTime(info)) >= maxAge {
			os.Remove(p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // only if empty
	}
	os.Chtimes(interval, now, now)
}

// progress drops a transfer that brings less than lowSpeedBytes in a
// period of timeout, the wait for the answer included: curl's low-speed
// limit as elfutils sets it. A server that accepts the connection and
// says nothing costs one period.
type progress struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	n      atomic.Int64
	done   chan struct{}
	once   sync.Once
}

func newProgress(parent context.Context, timeout time.Duration) *progress {
	ctx, cancel := context.WithCancelCause(parent)
	p := &progress{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go p.watch(timeout)
	return p
}

func (p *progress) watch(timeout time.Duration) {
	t := time.NewTicker(timeout)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-p.done:
			return
		case <-p.ctx.Done():
			return
		case <-t.C:
			n := p.n.Load()
			if n-last < lowSpeedBytes {
				p.cancel(errNoAnswer)
				return
			}
			last = n
		}
	}
}

// stop ends the watch and the transfer's context.
func (p *progress) stop() {
	p.once.Do(func() {
		close(p.done)
		p.cancel(nil)
	})
}

// explain turns the error of a transfer the watch dropped into
// errNoAnswer.
func (p *progress) explain(err error) error {
	if errors.Is(context.Cause(p.ctx), errNoAnswer) {
		return errNoAnswer
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errNoAnswer // DEBUGINFOD_MAXTIME
	}
	return err
}

// reader counts what r brings.
func (p *progress) reader(r io.Reader) io.Reader { return countingReader{r, &p.n} }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// accessTime is a file's last access time.
func accessTime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Sec, st.Atim.Nsec)
	}
	return fi.ModTime()
}

var (
	warnMu sync.Mutex
	warnTo = func(msg string) { fmt.Fprintf(os.Stderr, "dtrace: %s\n", msg) }
)

// SetWarnings sets where the package reports a problem that costs names
// and that the user should hear of once (a debuginfod server that does
// not answer); msg has no "dtrace: " prefix and no newline. By default
// it goes to the standard error with that prefix.
func SetWarnings(f func(msg string)) {
	warnMu.Lock()
	defer warnMu.Unlock()
	warnTo = f
}

func warnf(format string, args ...any) {
	warnMu.Lock()
	f := warnTo
	warnMu.Unlock()
	if f != nil {
		f(fmt.Sprintf(format, args...))
	}
}

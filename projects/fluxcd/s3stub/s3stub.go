// Package s3stub serves one S3 bucket in process, for the Bucket reconciler's minio client.
//
// What it is not, first: it is not an S3 server. It opens no socket that anything connects
// to, speaks no TLS, checks no signatures, and answers exactly what upstream's own test mock
// (github.com/fluxcd/source-controller/internal/mock/s3) answers: HEAD bucket (BucketExists),
// GET ?location (GetBucketLocation), GET bucket (ListObjects, V1 or V2, prefix and
// continuation ignored, never truncated), HEAD object (StatObject) and GET object. It ignores
// If-Match (so an object replaced between StatObject and GetObject is served, where S3 would
// answer 412), Range, and keys that need XML escaping. Unknown keys get a bare 404 without an
// S3 error body.
//
// How it works: the HTTP handler is upstream's mock itself, taken from the unexported field
// of an s3.Server that is never started. Install swaps minio-go's package-level
// minio.DefaultTransport hook; every *http.Transport it returns has an in-process
// http.RoundTripper registered for "http" and "https" (http.Transport.RegisterProtocol), so
// requests to Endpoint never reach the network. minio.New calls the hook whenever no
// transport is given, and source-controller's internal/bucket/minio calls it itself when it
// sets TLS or proxy options, so every generic-provider client is covered. No connection and
// no goroutine is made per request, so a testing/synctest bubble stays durable: handlers run
// on the caller's goroutine and the bubble's clock.
//
// Determinism: responses depend only on the objects, their LastModified times and the
// request. New and Put stamp LastModified with time.Now(), which is virtual (starting at
// 2000-01-01T00:00:00Z) inside a synctest bubble; PutAt takes the time explicitly.
//
// Only one Stub may be installed at a time (minio.DefaultTransport is a global); tests that
// install one must not run in parallel.
package s3stub

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	mocks3 "github.com/fluxcd/source-controller/internal/mock/s3"
	"github.com/minio/minio-go/v7"
)

// DefaultEndpoint is the host:port a Stub serves unless SetEndpoint changes it. The name is
// under the reserved .test TLD, so it can never resolve to a real host, and it is not an
// AWS or Google name, so minio uses path-style requests as it would for a generic endpoint.
const DefaultEndpoint = "s3.ctrlbugs.test:9000"

// Request is one request the Stub served, in arrival order.
type Request struct {
	// Time is time.Now() when the request arrived (virtual inside a synctest bubble).
	Time time.Time
	// Method is the HTTP method, e.g. "HEAD" or "GET".
	Method string
	// Scheme is "http" or "https" (https is served in process too: no TLS happens).
	Scheme string
	// Host is the request's host:port.
	Host string
	// Path is the request path, e.g. "/bucket/dir/key".
	Path string
	// Query is the raw query as the client sent it, e.g. "location=".
	Query string
	// Status is the HTTP status served; 0 if the request failed before reaching the handler.
	Status int
}

// String renders the request for traces: "GET /bucket?location= -> 200".
func (r Request) String() string {
	u := r.Path
	if r.Query != "" {
		u += "?" + r.Query
	}
	return fmt.Sprintf("%s %s -> %d", r.Method, u, r.Status)
}

// Stub is one in-process S3 bucket. The zero value is not usable: call New.
type Stub struct {
	mu       sync.Mutex
	mock     *mocks3.Server // upstream's mock; its Objects are guarded by mu
	handler  http.Handler   // the mock's unexported mux
	endpoint string
	requests []Request
}

// New returns a Stub serving bucketName with the given objects (key → content), each with
// LastModified time.Now() and content type "application/octet-stream". The objects map is
// copied.
//
// New calls upstream's mocks3.NewServer, which binds a loopback listener at once (through
// httptest.NewUnstartedServer); New closes that listener before returning. The server is
// never started and nothing ever connects to it.
func New(bucketName string, objects map[string][]byte) *Stub {
	mock := mocks3.NewServer(bucketName)
	closeUnstartedListener(mock)
	s := &Stub{
		mock:     mock,
		handler:  mockHandler(mock),
		endpoint: DefaultEndpoint,
	}
	now := time.Now()
	for k, v := range objects {
		s.putLocked(k, v, now)
	}
	return s
}

// BucketName returns the name of the bucket served.
func (s *Stub) BucketName() string { return s.mock.BucketName }

// Endpoint returns the host:port to put in Bucket.spec.endpoint (with spec.insecure: true
// for http; https works too, without TLS).
func (s *Stub) Endpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// SetEndpoint changes the host:port served. Requests to any other host fail as a dial
// error would.
func (s *Stub) SetEndpoint(hostPort string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoint = hostPort
}

// Put creates or replaces the object key with data, LastModified time.Now().
func (s *Stub) Put(key string, data []byte) { s.PutAt(key, data, time.Now()) }

// PutAt creates or replaces the object key with data and the given LastModified time.
func (s *Stub) PutAt(key string, data []byte, lastModified time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(key, data, lastModified)
}

func (s *Stub) putLocked(key string, data []byte, lastModified time.Time) {
	o := &mocks3.Object{
		Key:          key,
		LastModified: lastModified.UTC().Truncate(time.Second),
		ContentType:  "application/octet-stream",
		Content:      slices.Clone(data),
	}
	// S3 lists keys in lexicographic order; the mock lists in slice order, so keep the slice
	// sorted.
	objs := slices.DeleteFunc(slices.Clone(s.mock.Objects), func(x *mocks3.Object) bool { return x.Key == key })
	i, _ := slices.BinarySearchFunc(objs, key, func(x *mocks3.Object, k string) int { return strings.Compare(x.Key, k) })
	s.mock.Objects = slices.Insert(objs, i, o)
}

// Delete removes the object key; it reports whether it existed.
func (s *Stub) Delete(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.mock.Objects)
	s.mock.Objects = slices.DeleteFunc(slices.Clone(s.mock.Objects), func(x *mocks3.Object) bool { return x.Key == key })
	return len(s.mock.Objects) != n
}

// Objects returns a copy of the bucket's contents, key → content.
func (s *Stub) Objects() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string][]byte, len(s.mock.Objects))
	for _, o := range s.mock.Objects {
		m[o.Key] = slices.Clone(o.Content)
	}
	return m
}

// Requests returns a copy of the log of requests served, in arrival order.
func (s *Stub) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ResetRequests clears the request log.
func (s *Stub) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// RoundTrip serves req in process. It implements http.RoundTripper, so a Stub can also be
// used directly as an http.Client's transport.
func (s *Stub) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// The mock reads no bodies; drain for a RoundTripper's contract.
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	entry := Request{
		Time:   time.Now(),
		Method: req.Method,
		Scheme: req.URL.Scheme,
		Host:   req.URL.Host,
		Path:   req.URL.Path,
		Query:  req.URL.RawQuery,
	}
	if err := req.Context().Err(); err != nil {
		s.requests = append(s.requests, entry)
		return nil, err
	}
	if req.URL.Host != s.endpoint {
		s.requests = append(s.requests, entry)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("s3stub: no in-process server at %q (serving %q)", req.URL.Host, s.endpoint)}
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	if req.Method == http.MethodHead {
		resp.Body = http.NoBody
	}
	entry.Status = resp.StatusCode
	s.requests = append(s.requests, entry)
	return resp, nil
}

var (
	installMu sync.Mutex
	installed *Stub
)

// Install makes minio clients created from now on reach s instead of the network, by
// swapping minio.DefaultTransport. It returns a func that restores the previous hook; call
// it (e.g. with t.Cleanup or defer) before installing another Stub. Install panics if a Stub
// is already installed.
//
// Clients created before Install, or given their own Transport, are not affected.
func (s *Stub) Install() (restore func()) {
	installMu.Lock()
	defer installMu.Unlock()
	if installed != nil {
		panic("s3stub: a Stub is already installed (minio.DefaultTransport is global)")
	}
	installed = s
	prev := minio.DefaultTransport
	minio.DefaultTransport = func(secure bool) (*http.Transport, error) {
		tr, err := prev(secure)
		if err != nil {
			return nil, err
		}
		// RegisterProtocol panics if a scheme is registered twice on one transport; prev
		// returns a fresh transport on every call, so this is the first registration.
		tr.RegisterProtocol("http", s)
		tr.RegisterProtocol("https", s)
		return tr, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			installMu.Lock()
			defer installMu.Unlock()
			minio.DefaultTransport = prev
			installed = nil
		})
	}
}

// mockHandler returns the unexported mux of upstream's mock, which routes every path to the
// mock's (unexported) handler method.
func mockHandler(m *mocks3.Server) http.Handler {
	f := reflect.ValueOf(m).Elem().FieldByName("mux")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*http.ServeMux]() {
		panic("s3stub: upstream internal/mock/s3.Server has no field mux *http.ServeMux; the pinned version changed")
	}
	mux := *(**http.ServeMux)(unsafe.Pointer(f.UnsafeAddr()))
	if mux == nil {
		panic("s3stub: upstream internal/mock/s3.Server.mux is nil")
	}
	return mux
}

// closeUnstartedListener closes the loopback listener that mocks3.NewServer bound through
// httptest.NewUnstartedServer. It does not call the mock's Stop (httptest.Server.Close),
// which would also close idle connections of the global http.DefaultTransport.
func closeUnstartedListener(m *mocks3.Server) {
	f := reflect.ValueOf(m).Elem().FieldByName("srv")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*httptest.Server]() {
		panic("s3stub: upstream internal/mock/s3.Server has no field srv *httptest.Server; the pinned version changed")
	}
	srv := *(**httptest.Server)(unsafe.Pointer(f.UnsafeAddr()))
	if srv == nil || srv.Listener == nil {
		return
	}
	if err := srv.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		panic(fmt.Sprintf("s3stub: closing the mock's unused listener: %v", err))
	}
}

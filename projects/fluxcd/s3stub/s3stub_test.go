package s3stub_test

import (
	"bytes"
	"crypto/md5"
	"crypto/tls"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/fluxcd/source-controller/ctrlbugs/s3stub"
	bucketminio "github.com/fluxcd/source-controller/internal/bucket/minio"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

const bucketName = "podinfo"

func objects() map[string][]byte {
	return map[string][]byte{
		"manifests/deploy.yaml": []byte("kind: Deployment\n"),
		"manifests/svc.yaml":    []byte("kind: Service\n"),
		"README.md":             []byte("# podinfo\n"),
	}
}

func etag(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func newMinio(t *testing.T, endpoint string) *minio.Client {
	t.Helper()
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4("", "", ""), Secure: false})
	if err != nil {
		t.Fatalf("minio.New: %v", err)
	}
	return c
}

func list(t *testing.T, c *minio.Client) map[string]string {
	t.Helper()
	got := map[string]string{}
	for o := range c.ListObjects(t.Context(), bucketName, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("ListObjects: %v", o.Err)
		}
		got[o.Key] = o.ETag
	}
	return got
}

func get(t *testing.T, c *minio.Client, key string) []byte {
	t.Helper()
	o, err := c.GetObject(t.Context(), bucketName, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("GetObject %s: %v", key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("GetObject %s: read: %v", key, err)
	}
	return b
}

// TestMinioClient drives the stub with a plain minio-go client inside a synctest bubble:
// bucket exists, list, get, stat, then a Put and a Delete between "reconciles".
func TestMinioClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := s3stub.New(bucketName, objects())
		defer s.Install()()
		c := newMinio(t, s.Endpoint())

		ok, err := c.BucketExists(t.Context(), bucketName)
		if err != nil || !ok {
			t.Fatalf("BucketExists = %v, %v; want true, nil", ok, err)
		}
		want := map[string]string{}
		for k, v := range objects() {
			want[k] = etag(v)
		}
		if got := list(t, c); !maps.Equal(got, want) {
			t.Fatalf("ListObjects = %v; want %v", got, want)
		}
		for k, v := range objects() {
			if got := get(t, c, k); !bytes.Equal(got, v) {
				t.Fatalf("GetObject %s = %q; want %q", k, got, v)
			}
		}
		st, err := c.StatObject(t.Context(), bucketName, "README.md", minio.StatObjectOptions{})
		if err != nil {
			t.Fatalf("StatObject: %v", err)
		}
		if st.ETag != etag([]byte("# podinfo\n")) || st.Size != 10 {
			t.Fatalf("StatObject = etag %s size %d", st.ETag, st.Size)
		}
		// The bubble's clock starts at 2000-01-01T00:00:00Z and New stamped time.Now().
		if want := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC); !st.LastModified.Equal(want) {
			t.Fatalf("StatObject LastModified = %v; want %v", st.LastModified, want)
		}

		time.Sleep(10 * time.Minute) // between reconciles; must not hang the bubble
		s.Put("README.md", []byte("# podinfo v2\n"))
		s.Delete("manifests/svc.yaml")

		c = newMinio(t, s.Endpoint()) // upstream builds a new client per reconcile
		want["README.md"] = etag([]byte("# podinfo v2\n"))
		delete(want, "manifests/svc.yaml")
		if got := list(t, c); !maps.Equal(got, want) {
			t.Fatalf("ListObjects after Put/Delete = %v; want %v", got, want)
		}
		st, err = c.StatObject(t.Context(), bucketName, "README.md", minio.StatObjectOptions{})
		if err != nil || !st.LastModified.Equal(time.Date(2000, 1, 1, 0, 10, 0, 0, time.UTC)) {
			t.Fatalf("StatObject after Put = %v, %v", st.LastModified, err)
		}
		_, err = c.StatObject(t.Context(), bucketName, "manifests/svc.yaml", minio.StatObjectOptions{})
		if minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Fatalf("StatObject of a deleted key: err = %v; want NoSuchKey", err)
		}

		reqs := s.Requests()
		var lines []string
		for _, r := range reqs {
			lines = append(lines, r.String())
		}
		t.Logf("requests:\n%s", strings.Join(lines, "\n"))
		// A new minio client looks up the bucket's region first, then BucketExists is a HEAD.
		if len(reqs) < 2 || reqs[0].String() != "GET /podinfo/?location= -> 200" || reqs[1].String() != "HEAD /podinfo/ -> 200" {
			t.Fatalf("first requests = %v; want GET ?location=, HEAD bucket", reqs)
		}
		time.Sleep(time.Hour) // idle transports left behind must not keep the bubble busy
		synctest.Wait()
	})
}

// TestDeterministicLog checks that two identical runs in two bubbles serve identical
// request logs, times included.
func TestDeterministicLog(t *testing.T) {
	run := func() []s3stub.Request {
		var reqs []s3stub.Request
		synctest.Test(t, func(t *testing.T) {
			s := s3stub.New(bucketName, objects())
			defer s.Install()()
			c := newMinio(t, s.Endpoint())
			list(t, c)
			time.Sleep(90 * time.Second)
			get(t, c, "README.md")
			reqs = s.Requests()
		})
		return reqs
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Fatalf("request logs differ:\n%v\n%v", a, b)
	}
	if !a[len(a)-1].Time.Equal(time.Date(2000, 1, 1, 0, 1, 30, 0, time.UTC)) {
		t.Fatalf("last request at %v", a[len(a)-1].Time)
	}
}

// TestUnknownHost: a client pointed elsewhere gets a dial-like error, not the stub's data.
func TestUnknownHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := s3stub.New(bucketName, objects())
		defer s.Install()()
		c := newMinio(t, "elsewhere.test:9000")
		start := time.Now()
		_, err := c.BucketExists(t.Context(), bucketName)
		if err == nil || !strings.Contains(err.Error(), "no in-process server") {
			t.Fatalf("BucketExists on an unknown host: err = %v", err)
		}
		t.Logf("unknown host: %d request(s) over %v virtual: %v", len(s.Requests()), time.Since(start), err)
	})
}

func TestInstallTwicePanics(t *testing.T) {
	s := s3stub.New(bucketName, nil)
	restore := s.Install()
	defer restore()
	defer func() {
		if recover() == nil {
			t.Fatal("second Install did not panic")
		}
	}()
	s3stub.New("other", nil).Install()
}

// TestUpstreamClient runs source-controller's own internal/bucket/minio client, as the
// Bucket reconciler builds it for provider generic, against the stub: plain http
// (spec.insecure) and https with a TLS config (upstream then calls minio.DefaultTransport
// itself).
func TestUpstreamClient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		insecure bool
		opts     []bucketminio.Option
	}{
		{name: "insecure", insecure: true},
		{name: "tls", insecure: false, opts: []bucketminio.Option{bucketminio.WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := s3stub.New(bucketName, objects())
				defer s.Install()()
				bucket := &sourcev1.Bucket{Spec: sourcev1.BucketSpec{
					Provider:   sourcev1.BucketProviderGeneric,
					BucketName: bucketName,
					Endpoint:   s.Endpoint(),
					Insecure:   tc.insecure,
				}}
				c, err := bucketminio.NewClient(t.Context(), bucket, tc.opts...)
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				defer c.Close(t.Context())

				ok, err := c.BucketExists(t.Context(), bucketName)
				if err != nil || !ok {
					t.Fatalf("BucketExists = %v, %v", ok, err)
				}
				got := map[string]string{}
				if err := c.VisitObjects(t.Context(), bucketName, "", func(key, etag string) error {
					got[key] = etag
					return nil
				}); err != nil {
					t.Fatalf("VisitObjects: %v", err)
				}
				if len(got) != 3 {
					t.Fatalf("VisitObjects = %v", got)
				}
				dir := t.TempDir()
				for k, v := range objects() {
					p := filepath.Join(dir, filepath.FromSlash(k))
					tag, err := c.FGetObject(t.Context(), bucketName, k, p)
					if err != nil {
						t.Fatalf("FGetObject %s: %v", k, err)
					}
					if strings.Trim(tag, `"`) != etag(v) {
						t.Fatalf("FGetObject %s: etag %s", k, tag)
					}
					b, err := os.ReadFile(p)
					if err != nil || !bytes.Equal(b, v) {
						t.Fatalf("FGetObject %s wrote %q, %v", k, b, err)
					}
				}
				_, err = c.FGetObject(t.Context(), bucketName, "missing", filepath.Join(dir, "missing"))
				if !c.ObjectIsNotFound(err) {
					t.Fatalf("FGetObject missing: err = %v; ObjectIsNotFound = false", err)
				}
				for _, r := range s.Requests() {
					if wantScheme := map[bool]string{true: "http", false: "https"}[tc.insecure]; r.Scheme != wantScheme {
						t.Fatalf("request %v over %s; want %s", r, r.Scheme, wantScheme)
					}
				}
				t.Logf("%d requests, first %v, last %v", len(s.Requests()), s.Requests()[0], s.Requests()[len(s.Requests())-1])
				time.Sleep(time.Hour)
			})
		})
	}
}

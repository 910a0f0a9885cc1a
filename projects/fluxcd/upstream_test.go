package ctrlbugs

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fluxcd/pkg/artifact/storage"
	// These imports pin the upstream packages the harness drives, so that `go mod tidy`
	// keeps their dependencies in go.sum and `go test ./...` compiles them.
	_ "github.com/fluxcd/pkg/runtime/patch"
	_ "github.com/fluxcd/source-controller/internal/bucket/minio"
	_ "github.com/fluxcd/source-controller/internal/controller"
	_ "github.com/fluxcd/source-controller/internal/mock/s3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestArchiveDigestIgnoresMtime checks the claim in UPSTREAM-MAP.md that upstream's
// Storage.Archive (fluxcd/pkg/artifact, the Bucket reconciler's reconcileArtifact) produces
// the same digest for the same content whatever the files' mtimes, owners, temp dir name
// or clock: sanitizeHeader zeroes ModTime/AccessTime/ChangeTime, uid/gid and names, and
// the gzip header carries no time.
func TestArchiveDigestIgnoresMtime(t *testing.T) {
	files := map[string]string{"README.md": "# podinfo\n", "manifests/deploy.yaml": "kind: Deployment\n"}
	archive := func(t *testing.T, mtime time.Time) (digest string, size int64) {
		src := t.TempDir()
		for name, content := range files {
			p := filepath.Join(src, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		s := &storage.Storage{BasePath: t.TempDir(), Hostname: "source-controller.flux-system.svc.cluster.local."}
		a := s.NewArtifactFor("Bucket", &metav1.ObjectMeta{Namespace: "default", Name: "b"}, "sha256:abc", "abc.tar.gz")
		if err := s.MkdirAll(a); err != nil {
			t.Fatal(err)
		}
		if err := s.Archive(&a, src, nil); err != nil {
			t.Fatal(err)
		}
		t.Logf("mtime %v: digest %s size %d url %s lastUpdateTime %v", mtime, a.Digest, *a.Size, a.URL, a.LastUpdateTime.Time)
		return a.Digest, *a.Size
	}
	d1, s1 := archive(t, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	d2, s2 := archive(t, time.Now().Add(-time.Hour))
	var d3 string
	synctest.Test(t, func(t *testing.T) { d3, _ = archive(t, time.Now()) })
	if d1 != d2 || d1 != d3 || s1 != s2 {
		t.Fatalf("digests differ: %s (%d) %s (%d) %s", d1, s1, d2, s2, d3)
	}
}

package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

func TestPinnedUpstream(t *testing.T) {
	p, err := PinnedUpstream("engine", "k8s.io/apimachinery", "k8s.io/apimachinery", "sigs.k8s.io/yaml")
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Versions["k8s.io/apimachinery"]; !strings.HasPrefix(v, "v0.") {
		t.Errorf("apimachinery version %q", v)
	}
	if v := p.Versions["sigs.k8s.io/yaml"]; !strings.HasPrefix(v, "v1.") {
		t.Errorf("sigs.k8s.io/yaml version %q", v)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "pkg", "runtime")); err != nil {
		t.Errorf("Dir %q: %v", p.Dir, err)
	}
	// Asked again, the answer comes from the file beside the test binary,
	// and is the same.
	exe, _ := os.Executable()
	if _, err := os.Stat(exe + ".pinned.json"); err != nil {
		t.Errorf("no cached answer beside the test binary: %v", err)
	}
	again, err := PinnedUpstream("engine", "k8s.io/apimachinery", "k8s.io/apimachinery", "sigs.k8s.io/yaml")
	if err != nil || again.Dir != p.Dir || fmt.Sprint(again.Versions) != fmt.Sprint(p.Versions) {
		t.Errorf("asked again: %+v, %v; first %+v", again, err, p)
	}
	if _, err := PinnedUpstream("engine", "example.com/not/a/dependency"); err == nil || !strings.Contains(err.Error(), "example.com/not/a/dependency") {
		t.Errorf("a module outside the build list: error %v, want one naming it", err)
	}
}

// The versions are the binary's build info's: a replaced module's is its
// replacement's (empty for a directory), as `go list -m` would say.
func TestDepVersionsHonoursReplace(t *testing.T) {
	bi := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "example.com/a", Version: "v1.2.3"},
		{Path: "example.com/b", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1-fork"}},
		{Path: "example.com/c", Version: "v0.1.0", Replace: &debug.Module{Path: "../c"}},
	}}
	got, err := depVersions(bi, []string{"example.com/a", "example.com/b", "example.com/c"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"example.com/a": "v1.2.3", "example.com/b": "v1.0.1-fork", "example.com/c": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("versions %v, want %v", got, want)
	}
	if _, err := depVersions(bi, []string{"example.com/a", "example.com/z"}); err == nil || !strings.Contains(err.Error(), "example.com/z") {
		t.Errorf("missing module: error %v, want one naming it", err)
	}
}

func TestInstallCRDFilesNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("kind: ConfigMap\napiVersion: v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	err = InstallCRDFiles(dir, "bad.yaml")(srv)
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml: ") {
		t.Fatalf("error %v, want one starting with the file", err)
	}
}

package engine

import (
	"fmt"
	"os"
	"path/filepath"
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

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNewestOn(t *testing.T) {
	listed := []string{"v0.24.1", "v0.25.0", "v0.25.10", "v0.25.2", "v0.26.0-alpha.1", "v0.25.11-rc.0", "bogus"}
	for line, want := range map[string]string{"v0.25": "v0.25.10", "v0.24": "v0.24.1", "v0.26": "", "v1.37": ""} {
		if got := newestOn(listed, line); got != want {
			t.Errorf("newestOn(%s) = %q, want %q", line, got, want)
		}
	}
}

func TestStagingModules(t *testing.T) {
	gomod := filepath.Join(t.TempDir(), "go.mod")
	data := `module x

go 1.26

require (
	k8s.io/api v0.36.4
	k8s.io/client-go v0.36.4
	k8s.io/klog/v2 v2.140.0
	k8s.io/kubernetes v1.36.3
	k8s.io/utils v0.0.0-20260707023825-cf1189d6abe3
	sigs.k8s.io/controller-runtime v0.24.1
)

require k8s.io/cri-client v0.36.4 // indirect
`
	if err := os.WriteFile(gomod, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := stagingModules(gomod)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k8s.io/api", "k8s.io/client-go", "k8s.io/cri-client"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// The engine's own go.mod: its staging modules include the ones
// k8s.io/kubernetes needs at v0.0.0 (a sample of them).
func TestStagingModulesEngine(t *testing.T) {
	got, err := stagingModules("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"k8s.io/api", "k8s.io/apiserver", "k8s.io/component-helpers", "k8s.io/cri-client"} {
		if !slices.Contains(got, m) {
			t.Errorf("%s missing from %v", m, got)
		}
	}
}

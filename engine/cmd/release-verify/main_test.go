package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/finding"
)

func TestPlan(t *testing.T) {
	write := func(t *testing.T, root, body string) {
		t.Helper()
		dir := filepath.Join(root, "projects", "p")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "releases.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := []*finding.Finding{
		{ID: "p-2", Project: "p", Path: "findings/p/p-2.md", Releases: []finding.Release{{Version: "v1.0.0"}}},
		{ID: "p-1", Project: "p", Path: "findings/p/p-1.md", Releases: []finding.Release{{Version: "v1.0.0"}, {Version: "v0.9.0"}}},
		{ID: "p-3", Project: "p", Path: "findings/p/p-3.md"},
	}
	tests := []struct {
		name, releases, only, want, wantErr string
	}{
		{"grouped by release", `{"releases": [{"version": "v1.0.0", "get": ["m@v1.0.0"]}, {"version": "v0.9.0", "get": ["m@v0.9.0"]}]}`, "", "p@v0.9.0:p-1 p@v1.0.0:p-2,p-1", ""},
		{"one finding", `{"releases": [{"version": "v1.0.0", "get": ["m@v1.0.0"]}, {"version": "v0.9.0", "get": ["m@v0.9.0"]}]}`, "p-2", "p@v1.0.0:p-2", ""},
		{"release not described", `{"releases": [{"version": "v1.0.0", "get": ["m@v1.0.0"]}]}`, "", "", "does not say how to build v0.9.0"},
		{"unknown field", `{"releases": [{"version": "v1.0.0", "gets": ["m@v1.0.0"]}]}`, "", "", "unknown field"},
		{"nothing to get", `{"releases": [{"version": "v1.0.0"}]}`, "", "", "version and get are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tc.releases)
			jobs, err := plan(root, fs, tc.only)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range jobs {
				got = append(got, j.project+"@"+j.release.Version+":"+strings.Join(j.ids, ","))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("jobs %q, want %q", g, tc.want)
			}
		})
	}
}

func TestOnRelease(t *testing.T) {
	ids := []string{"crossplane-2"}
	for line, want := range map[string]string{
		"crossplane-2 REFUTED control=clean trace=sha256:ab":                      "crossplane-2@v2.2.1 REFUTED control=clean trace=sha256:ab",
		"crossplane-2: recorded findings/x (1 bytes) trace=sha256:ab":             "crossplane-2@v2.2.1: recorded findings/x (1 bytes) trace=sha256:ab",
		"crossplane-2: HARNESS-BROKEN findings/crossplane/crossplane-2.md: x: y":  "crossplane-2@v2.2.1: HARNESS-BROKEN findings/crossplane/crossplane-2.md: x: y",
		"crossplane-2 MISMATCH(a (b)) control=clean trace=sha256:ab":              "crossplane-2@v2.2.1 MISMATCH(a (b)) control=clean trace=sha256:ab",
		"crossplane-3 REFUTED control=clean trace=sha256:ab":                      "",
		"=== RUN   TestFindings/crossplane-2":                                     "",
		"    findings.go:12: crossplane-2: primary run does not give the verdict": "",
	} {
		id, got, ok := onRelease(line, ids, "v2.2.1")
		if ok != (want != "") || got != want || (ok && id != "crossplane-2") {
			t.Errorf("%q: got %q, %q, %v; want %q", line, id, got, ok, want)
		}
	}
}

// A scenario is explored only on a release its project's releases.json
// lists; the refusal names the ones it does, before anything is copied.
func TestExploreOnRefusesAnUnlistedRelease(t *testing.T) {
	root := t.TempDir()
	for file, body := range map[string]string{
		"projects/p/releases.json": `{"releases": [{"version": "v1.0.0", "get": ["a.io/m@v1.0.0"]}]}`,
		"scenarios/p/s.json":       `{}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := exploreOn(context.Background(), root, filepath.Join(root, "scenarios", "p", "s.json"), "v2.0.0")
	if err == nil || !strings.Contains(err.Error(), "does not list v2.0.0 (it lists v1.0.0)") {
		t.Errorf("error %v, want one naming the listed releases", err)
	}
	if _, err := exploreOn(context.Background(), root, filepath.Join(root, "scenarios", "q", "s.json"), "v1.0.0"); err == nil {
		t.Error("a scenario file that does not exist: no error")
	}
}

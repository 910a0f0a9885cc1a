package main

import (
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

func TestVerdictLine(t *testing.T) {
	for line, want := range map[string]string{
		"crossplane-2 REFUTED control=clean trace=sha256:ab": "crossplane-2|REFUTED control=clean trace=sha256:ab",
		"crossplane-2: recorded findings/x (1 bytes)":        "crossplane-2|recorded findings/x (1 bytes)",
		"=== RUN   TestFindings/crossplane-2":                "",
	} {
		m := verdictLine.FindStringSubmatch(line)
		got := ""
		if m != nil {
			got = m[1] + "|" + m[3]
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}

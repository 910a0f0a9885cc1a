package upstream

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		main     string
		siblings []string
		wantErr  string
	}{
		{name: "one line", in: "github.com/fluxcd/source-controller\n", main: "github.com/fluxcd/source-controller"},
		{name: "no final newline", in: "sigs.k8s.io/cluster-api", main: "sigs.k8s.io/cluster-api"},
		{
			name:     "siblings and comments",
			in:       "github.com/crossplane/crossplane/v2\n# siblings\n\ngithub.com/crossplane/crossplane-runtime/v2\n  github.com/crossplane/crossplane/apis/v2  \n",
			main:     "github.com/crossplane/crossplane/v2",
			siblings: []string{"github.com/crossplane/crossplane-runtime/v2", "github.com/crossplane/crossplane/apis/v2"},
		},
		{name: "empty", in: "", wantErr: ":1: the first line (the upstream module): want a module path, got an empty line"},
		{name: "comment first", in: "# upstream\nsigs.k8s.io/cluster-api\n", wantErr: ":1: the first line (the upstream module): want a module path, got a comment"},
		{name: "blank first", in: "\nsigs.k8s.io/cluster-api\n", wantErr: ":1: the first line"},
		{name: "two on a line", in: "a.io/x a.io/y\n", wantErr: ":1: the first line (the upstream module): want one module path without a version"},
		{name: "a version", in: "a.io/x\na.io/y@v1.0.0\n", wantErr: ":2: sibling module: want one module path without a version"},
		{name: "twice", in: "a.io/x\na.io/y\na.io/x\n", wantErr: ":3: a.io/x named twice"},
		{name: "not a path", in: "a.io/x\nruntime\n", wantErr: `:2: sibling module: "runtime" is not a module path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("projects/p/UPSTREAM", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Main != tt.main || !slices.Equal(f.Siblings, tt.siblings) {
				t.Errorf("got %+v, want main %q siblings %v", f, tt.main, tt.siblings)
			}
		})
	}
}

// TestProjects: every project's UPSTREAM file parses.
func TestProjects(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "projects", "*", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no projects/*/UPSTREAM beside the engine")
	}
	for _, p := range paths {
		project := filepath.Base(filepath.Dir(p))
		if _, err := Read(filepath.Join("..", "..", ".."), project); err != nil {
			t.Error(err)
		}
	}
}

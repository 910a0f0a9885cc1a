package gocmd

import (
	"slices"
	"strings"
	"testing"
)

func TestWithout(t *testing.T) {
	env := []string{"PATH=/bin", "MAKEFLAGS=-j2 -- PROJECT=fluxcd", "GOWORK=/real/go.work", "EMPTY=", "MAKELEVEL=1", "NOEQUALS"}
	got := Without(env, slices.Concat(MakeVars, TreeVars, []string{"EMPTY"})...)
	if want := []string{"PATH=/bin", "NOEQUALS"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestOutputError(t *testing.T) {
	_, err := Output(t.Context(), t.TempDir(), nil, "no-such-subcommand")
	if err == nil || !strings.HasPrefix(err.Error(), "go no-such-subcommand: exit status 2: go no-such-subcommand: unknown command") {
		t.Errorf("err = %v", err)
	}
}

func TestAlignArgs(t *testing.T) {
	mod := func(path, version string) Module { return Module{Path: path, Version: version} }
	replaced := func(m Module, path, version string) Module {
		m.Replace = &Module{Path: path, Version: version}
		return m
	}
	ws := []Module{
		{Path: "example.com/corpus/engine", Main: true},
		{Path: "example.com/corpus/projects/a", Main: true},
		mod("golang.org/x/net", "v0.60.0"),
		mod("golang.org/x/text", "v0.42.0"),
		replaced(mod("github.com/onsi/ginkgo/v2", "v2.28.1"), "github.com/onsi/ginkgo/v2", "v2.27.4"),
		mod("only.in/workspace", "v1.0.0"),
	}
	tests := []struct {
		name string
		own  []Module
		want []string
	}{
		{"already aligned", []Module{{Path: "example.com/corpus/projects/a", Main: true}, mod("golang.org/x/net", "v0.60.0")}, nil},
		{"lower versions raised", []Module{mod("golang.org/x/net", "v0.56.0"), mod("golang.org/x/text", "v0.42.0")}, []string{"-require=golang.org/x/net@v0.60.0"}},
		{"a higher version left", []Module{mod("golang.org/x/text", "v0.43.0")}, nil},
		{"the workspace's replacement carried over", []Module{mod("github.com/onsi/ginkgo/v2", "v2.27.4")},
			[]string{"-require=github.com/onsi/ginkgo/v2@v2.28.1", "-replace=github.com/onsi/ginkgo/v2@v2.28.1=github.com/onsi/ginkgo/v2@v2.27.4"}},
		{"the same replacement already there", []Module{replaced(mod("github.com/onsi/ginkgo/v2", "v2.28.1"), "github.com/onsi/ginkgo/v2", "v2.27.4")}, nil},
		{"a directory replacement and a module the workspace lacks kept", []Module{
			replaced(mod("example.com/corpus/engine", "v0.0.0-00010101000000-000000000000"), "../../engine", ""),
			mod("only.in/project", "v0.1.0"),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AlignArgs(ws, tt.own); !slices.Equal(got, tt.want) {
				t.Errorf("AlignArgs = %q, want %q", got, tt.want)
			}
		})
	}
}

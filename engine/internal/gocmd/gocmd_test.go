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

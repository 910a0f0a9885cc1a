package main

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// exitErr is a real *exec.ExitError (status 1), as `make bump` gives.
func exitErr(t *testing.T) error {
	t.Helper()
	err := exec.Command("false").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("false: %v", err)
	}
	return err
}

func TestClassify(t *testing.T) {
	ids := []string{"fluxcd-f1", "fluxcd-f2"}
	head := "== fluxcd: github.com/fluxcd/source-controller v1.9.3 -> v1.9.6\ngo: downloading github.com/fluxcd/source-controller v1.9.6\n"
	tail := "pin moved; review git diff projects/fluxcd/go.mod, then re-record (make record) or revert\n"
	tests := []struct {
		name    string
		output  string
		exit    bool
		want    []result
		wantErr string
	}{
		{
			name:   "unchanged",
			output: head + "fluxcd-f1: still refuted (oracle holds in all 4 runs)\nfluxcd-f2: still reproduces\n" + tail,
			want:   []result{{"fluxcd-f1", stillRefuted, ""}, {"fluxcd-f2", stillReproduces, ""}},
		},
		{
			name: "both flipped",
			output: head + "fluxcd-f1: the refuted claim now reproduces: oracle x fails in run \"a\": ev\n" +
				"fluxcd-f2: no longer reproduces (candidate fixed-upstream): oracle y holds in all 3 runs\n" + tail,
			want: []result{
				{"fluxcd-f1", noLongerRefuted, "oracle x fails in run \"a\": ev"},
				{"fluxcd-f2", noLongerReproduces, "oracle y holds in all 3 runs"},
			},
		},
		{
			name: "flipped in one variant",
			output: head + "fluxcd-f1: still refuted variants=4/4\n" +
				"fluxcd-f2: no longer reproduces (candidate fixed-upstream) variants=2/3: variant \"b\": oracle y holds (ev)\n" + tail,
			want: []result{
				{"fluxcd-f1", stillRefuted, ""},
				{"fluxcd-f2", noLongerReproduces, "variants=2/3: variant \"b\": oracle y holds (ev)"},
			},
		},
		{
			name:   "one run broken, one missing",
			output: head + "fluxcd-f1: harness broken: start controllers: boom\n" + tail,
			want: []result{
				{"fluxcd-f1", harnessBroken, "start controllers: boom"},
				{"fluxcd-f2", harnessBroken, "no verdict line: the test binary failed or crashed before judging it: no error line found"},
			},
		},
		{
			name:   "scenario broken",
			output: head + "fluxcd-f1: HARNESS-BROKEN scenario: kind Foo unknown\nfluxcd-f2: still reproduces\n" + tail,
			want:   []result{{"fluxcd-f1", harnessBroken, "scenario: kind Foo unknown"}, {"fluxcd-f2", stillReproduces, ""}},
		},
		{
			name: "build broken",
			output: head + "# github.com/fluxcd/source-controller/ctrlbugs\n./harness.go:40:12: undefined: controller.BucketReconciler\n" +
				"fluxcd: harness broken at github.com/fluxcd/source-controller@v1.8.0 (dependency resolution or build; see above)\n",
			exit: true,
			want: []result{
				{"fluxcd-f1", harnessBroken, "dependency resolution, build or vet failed: ./harness.go:40:12: undefined: controller.BucketReconciler"},
				{"fluxcd-f2", harnessBroken, "dependency resolution, build or vet failed: ./harness.go:40:12: undefined: controller.BucketReconciler"},
			},
		},
		{
			// What the registry answered for source-controller v1.9.6 (shortened).
			name: "dependency not served",
			output: head + "go: github.com/fluxcd/source-controller imports\n" +
				"\tgithub.com/fluxcd/pkg/artifact/config: github.com/fluxcd/pkg/artifact@v0.18.3: reading https://proxy.example/github.com/fluxcd/pkg/artifact/@v/v0.18.3.zip: 403 Forbidden\n" +
				"\tserver response: This module version is not available.\n" +
				"go: github.com/fluxcd/source-controller imports\n" +
				"\tgithub.com/fluxcd/pkg/artifact/digest: github.com/fluxcd/pkg/artifact@v0.18.3: reading https://proxy.example/github.com/fluxcd/pkg/artifact/@v/v0.18.3.zip: 403 Forbidden\n" +
				"go: upgraded github.com/fluxcd/pkg/helmtestserver v0.40.1 => v0.40.2: error finding sum for github.com/fluxcd/pkg/helmtestserver@v0.40.2: github.com/fluxcd/pkg/helmtestserver@v0.40.2: reading https://proxy.example/github.com/fluxcd/pkg/helmtestserver/@v/v0.40.2.zip: 403 Forbidden\n" +
				"fluxcd: harness broken at github.com/fluxcd/source-controller@v1.9.6 (dependency resolution or build; see above)\n",
			exit: true,
			want: []result{
				{"fluxcd-f1", notServed, "github.com/fluxcd/pkg/artifact@v0.18.3 (403 Forbidden), github.com/fluxcd/pkg/helmtestserver@v0.40.2 (403 Forbidden)"},
				{"fluxcd-f2", notServed, "github.com/fluxcd/pkg/artifact@v0.18.3 (403 Forbidden), github.com/fluxcd/pkg/helmtestserver@v0.40.2 (403 Forbidden)"},
			},
		},
		{
			name: "dependency conflict",
			output: head + "go: github.com/fluxcd/source-controller@v1.10.0 requires go >= 1.27.0; switching to go1.27.4\n" +
				"go: github.com/fluxcd/source-controller/ctrlbugs imports\n\tgithub.com/x/y: cannot find module providing package github.com/x/y\n" +
				"fluxcd: harness broken at github.com/fluxcd/source-controller@v1.10.0 (dependency resolution or build; see above)\n",
			exit: true,
			want: []result{
				{"fluxcd-f1", harnessBroken, "dependency resolution, build or vet failed: go: github.com/fluxcd/source-controller/ctrlbugs imports github.com/x/y: cannot find module providing package github.com/x/y"},
				{"fluxcd-f2", harnessBroken, "dependency resolution, build or vet failed: go: github.com/fluxcd/source-controller/ctrlbugs imports github.com/x/y: cannot find module providing package github.com/x/y"},
			},
		},
		{
			// bump-pin: the release no longer requires a declared sibling.
			name:   "siblings not aligned",
			output: head + "fluxcd: modules not aligned at github.com/fluxcd/source-controller@v1.10.0: github.com/fluxcd/pkg/artifact: github.com/fluxcd/source-controller@v1.10.0's go.mod does not require it\n",
			exit:   true,
			want: []result{
				{"fluxcd-f1", harnessBroken, "modules not aligned at github.com/fluxcd/source-controller@v1.10.0: github.com/fluxcd/pkg/artifact: github.com/fluxcd/source-controller@v1.10.0's go.mod does not require it"},
				{"fluxcd-f2", harnessBroken, "modules not aligned at github.com/fluxcd/source-controller@v1.10.0: github.com/fluxcd/pkg/artifact: github.com/fluxcd/source-controller@v1.10.0's go.mod does not require it"},
			},
		},
		{
			// bump-pin: the version a sibling must move to is not served.
			name: "sibling not served",
			output: head + "go: github.com/fluxcd/pkg/artifact@v0.18.3: reading https://proxy.example/github.com/fluxcd/pkg/artifact/@v/v0.18.3.info: 403 Forbidden\n" +
				"\tserver response: This module version is not available.\n" +
				"fluxcd: modules not aligned at github.com/fluxcd/source-controller@v1.9.6: github.com/fluxcd/pkg/artifact: no version the registry serves (tried v0.18.3 (what github.com/fluxcd/source-controller@v1.9.6's go.mod requires); see above)\n",
			exit: true,
			want: []result{
				{"fluxcd-f1", notServed, "github.com/fluxcd/pkg/artifact@v0.18.3 (403 Forbidden)"},
				{"fluxcd-f2", notServed, "github.com/fluxcd/pkg/artifact@v0.18.3 (403 Forbidden)"},
			},
		},
		{
			name: "registry unreachable",
			output: head + "go: github.com/x/y@v1.0.0: Get \"https://proxy.example/x/y/@v/v1.0.0.mod\": dial tcp: lookup proxy.example: no such host\n" +
				"fluxcd: harness broken at github.com/x/y@v1.0.0 (dependency resolution or build; see above)\n",
			exit:    true,
			wantErr: "could not be reached",
		},
		{name: "make failed otherwise", output: "usage: make bump PROJECT=fluxcd VERSION=v1.8.0 [MODULE=path]\n", exit: true, wantErr: "without reporting a broken harness"},
		{name: "unknown wording", output: "fluxcd-f1: still holds\n", wantErr: "not a bump verdict"},
		{name: "duplicate", output: "fluxcd-f1: still refuted\nfluxcd-f1: still refuted\n", wantErr: "two lines for fluxcd-f1"},
		{
			name:   "other projects' lines ignored",
			output: "other-f1: whatever\nfluxcd-f1: still refuted\nfluxcd-f2: still reproduces\n",
			want:   []result{{"fluxcd-f1", stillRefuted, ""}, {"fluxcd-f2", stillReproduces, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var exit error
			if tt.exit {
				exit = exitErr(t)
			}
			got, err := classify("fluxcd", ids, tt.output, exit)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestBumpEnv(t *testing.T) {
	got := bumpEnv([]string{"PATH=/bin", "MAKEFLAGS=-j2 -- PROJECT=fluxcd", "MODULE=x", "GOTOOLCHAIN=auto", "CTRLBUGS_ROOT=/real", "GOWORK=/real/go.work", "MAKELEVEL=1"})
	want := []string{"PATH=/bin", "GOTOOLCHAIN=auto"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name       string
		checks     []check
		wantFailed bool
		want       []string
	}{
		{
			name: "results only",
			checks: []check{
				{project: "fluxcd", module: "m", version: "v1.9.6", elapsed: 40 * time.Second, results: []result{{"fluxcd-f1", stillRefuted, ""}, {"fluxcd-f2", harnessBroken, "x"}}},
				{project: "fluxcd", module: "m", version: "v1.9.3", note: "no newer release served"},
			},
			want: []string{"fluxcd   m@v1.9.6        fluxcd-f1  still refuted            40s\n", "fluxcd   m@v1.9.3        -          no newer release served  -\n",
				"totals: 1 still refuted, 1 harness broken; bump time 40s"},
		},
		{
			name:       "a tool failure fails",
			checks:     []check{{project: "fluxcd", module: "m", note: "the served versions: go list: no network", failed: true}},
			wantFailed: true,
			want:       []string{"TOOL FAILURE: the served versions", "bump-check: FAILED"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if failed := summarize(&buf, tt.checks); failed != tt.wantFailed {
				t.Errorf("failed = %v, want %v", failed, tt.wantFailed)
			}
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

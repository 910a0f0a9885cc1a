package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// modJSON builds what `go mod edit -json` prints for a go.mod with these
// requirements ("path version") and replaces ("old[ version] => new[ version]").
func modJSON(t *testing.T, module string, requires, replaces []string) modFile {
	t.Helper()
	mv := func(f []string) string {
		if len(f) == 2 {
			return fmt.Sprintf(`{"Path": %q, "Version": %q}`, f[0], f[1])
		}
		return fmt.Sprintf(`{"Path": %q}`, f[0])
	}
	var req, rep []string
	for _, r := range requires {
		f := strings.Fields(r)
		req = append(req, fmt.Sprintf(`{"Path": %q, "Version": %q}`, f[0], f[1]))
	}
	for _, r := range replaces {
		old, repl, _ := strings.Cut(r, " => ")
		rep = append(rep, fmt.Sprintf(`{"Old": %s, "New": %s}`, mv(strings.Fields(old)), mv(strings.Fields(repl))))
	}
	data := fmt.Sprintf(`{"Module": {"Path": %q}, "Go": "1.25.10", "Require": [%s], "Replace": [%s], "Retract": null, "Tool": null}`,
		module, strings.Join(req, ", "), strings.Join(rep, ", "))
	mf, err := parseModFile([]byte(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return mf
}

const (
	xp        = "github.com/crossplane/crossplane/v2"
	xpRuntime = "github.com/crossplane/crossplane-runtime/v2"
	apis      = "github.com/crossplane/crossplane/apis/v2"
	capi      = "sigs.k8s.io/cluster-api"
	capiAPI   = "sigs.k8s.io/cluster-api/api"
)

func TestSiblingTargets(t *testing.T) {
	// The go.mod files of the releases, as the registry serves them (the
	// lines that matter).
	xp230 := []string{"dario.cat/mergo v1.0.2", xpRuntime + " v2.3.0", apis + " v2.0.0-20260424160951-8f231230ebb6"}
	xp240 := []string{xpRuntime + " v2.4.0", apis + " v2.3.4"}
	localAPIs := []string{apis + " => ./apis"}
	type want struct {
		path     string
		versions []string
	}
	tests := []struct {
		name              string
		main, version     string
		requires, replace []string
		siblings          []string
		want              []want
		wantDrops         []string
		wantErr           []string
	}{
		{
			name: "crossplane v2.3.0: xpRuntime as required; apis at its own tag, else as required",
			main: xp, version: "v2.3.0", requires: xp230, replace: localAPIs,
			siblings: []string{xpRuntime, apis},
			want:     []want{{xpRuntime, []string{"v2.3.0"}}, {apis, []string{"v2.3.0", "v2.0.0-20260424160951-8f231230ebb6"}}},
		},
		{
			name: "crossplane v2.4.0: apis at the same tag first (required v2.3.4 is nominal)",
			main: xp, version: "v2.4.0", requires: xp240, replace: localAPIs,
			siblings: []string{xpRuntime, apis},
			want:     []want{{xpRuntime, []string{"v2.4.0"}}, {apis, []string{"v2.4.0", "v2.3.4"}}},
		},
		{
			name: "cluster-api: a placeholder requirement is never a candidate",
			main: capi, version: "v1.14.2", requires: []string{capiAPI + " v0.0.0-00010101000000-000000000000"},
			replace:  []string{capiAPI + " => ./api"},
			siblings: []string{capiAPI},
			want:     []want{{capiAPI, []string{"v1.14.2"}}},
		},
		{
			name: "source-controller: required at the same tag, one candidate",
			main: "github.com/fluxcd/source-controller", version: "v1.9.3",
			requires: []string{"github.com/fluxcd/source-controller/api v1.9.3", "github.com/fluxcd/pkg/xpRuntime v0.110.1"},
			replace:  []string{"github.com/fluxcd/source-controller/api => ./api", "github.com/opencontainers/go-digest => github.com/opencontainers/go-digest v1.0.1-0.20220411205349-bde1400a84be"},
			siblings: []string{"github.com/fluxcd/source-controller/api", "github.com/fluxcd/pkg/xpRuntime"},
			want:     []want{{"github.com/fluxcd/source-controller/api", []string{"v1.9.3"}}, {"github.com/fluxcd/pkg/xpRuntime", []string{"v0.110.1"}}},
		},
		{
			name: "a directory outside upstream's tree: only the required version",
			main: xp, version: "v2.3.0", requires: xp230, replace: []string{apis + " => ../apis"},
			siblings: []string{apis},
			want:     []want{{apis, []string{"v2.0.0-20260424160951-8f231230ebb6"}}},
		},
		{
			name: "a tag of another major version is not tried",
			main: "a.io/m", version: "v3.1.0", requires: []string{"a.io/m/api/v2 v2.9.0"},
			replace:  []string{"a.io/m/api/v2 => ./api"},
			siblings: []string{"a.io/m/api/v2"},
			want:     []want{{"a.io/m/api/v2", []string{"v2.9.0"}}},
		},
		{
			name: "replaced by a version of itself: that version (what upstream builds)",
			main: "a.io/m", version: "v1.2.0", requires: []string{"a.io/lib v1.0.0"},
			replace:  []string{"a.io/lib => a.io/lib v1.0.5"},
			siblings: []string{"a.io/lib"},
			want:     []want{{"a.io/lib", []string{"v1.0.5"}}},
		},
		{
			name: "a version-specific replace for another version does not apply",
			main: "a.io/m", version: "v1.2.0", requires: []string{"a.io/lib v1.0.0"},
			replace:  []string{"a.io/lib v0.9.0 => ./lib"},
			siblings: []string{"a.io/lib"},
			want:     []want{{"a.io/lib", []string{"v1.0.0"}}},
		},
		{
			name: "replaced by a fork, placeholder outside the tree: every error at once (the one not required dropped)",
			main: "a.io/m", version: "v1.2.0",
			requires: []string{"a.io/forked v1.0.0", "a.io/ph v0.0.0-00010101000000-000000000000"},
			replace:  []string{"a.io/forked => b.io/fork v1.0.1", "a.io/ph => ../ph"},
			siblings: []string{"a.io/gone", "a.io/forked", "a.io/ph"},
			wantErr: []string{
				"a.io/forked: a.io/m@v1.2.0's go.mod replaces it with b.io/fork@v1.0.1",
				"a.io/ph: a.io/m@v1.2.0's go.mod requires it at v0.0.0-00010101000000-000000000000 and replaces it with ../ph",
			},
		},
		{
			name: "crossplane v2.2.1: apis/v2 is not required by the release (split out later): dropped, the others moved",
			main: xp, version: "v2.2.1", requires: []string{xpRuntime + " v2.2.1"},
			siblings:  []string{xpRuntime, apis},
			want:      []want{{xpRuntime, []string{"v2.2.1"}}},
			wantDrops: []string{apis},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mf := modJSON(t, tt.main, tt.requires, tt.replace)
			got, drops, err := siblingTargets(tt.main, tt.version, mf, tt.siblings)
			if fmt.Sprint(drops) != fmt.Sprint(tt.wantDrops) && tt.wantErr == nil {
				t.Errorf("drops %v, want %v", drops, tt.wantDrops)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; targets %+v", got)
				}
				lines := strings.Split(err.Error(), "\n")
				if len(lines) != len(tt.wantErr) {
					t.Fatalf("errors:\n%v\nwant %d", err, len(tt.wantErr))
				}
				for i, w := range tt.wantErr {
					if !strings.HasPrefix(lines[i], w) {
						t.Errorf("error %d: %q, want it to start with %q", i, lines[i], w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gotW []want
			for _, g := range got {
				var vs []string
				for _, c := range g.Candidates {
					if c.Why == "" {
						t.Errorf("%s@%s: no reason given", g.Path, c.Version)
					}
					vs = append(vs, c.Version)
				}
				gotW = append(gotW, want{g.Path, vs})
			}
			if !reflect.DeepEqual(gotW, tt.want) {
				t.Errorf("got %v, want %v", gotW, tt.want)
			}
		})
	}
}

func TestSameMajor(t *testing.T) {
	tests := []struct {
		path, version string
		want          bool
	}{
		{apis, "v2.3.0", true},
		{apis, "v3.0.0", false},
		{capiAPI, "v1.14.2", true},
		{capiAPI, "v0.3.0", true},
		{capiAPI, "v2.0.0", false},
		{"a.io/m/v10", "v10.1.0", true},
		{"a.io/vendor", "v1.0.0", true}, // "/v" not followed by a number
		{apis, "2.3.0", false},
	}
	for _, tt := range tests {
		if got := sameMajor(tt.path, tt.version); got != tt.want {
			t.Errorf("sameMajor(%s, %s) = %v, want %v", tt.path, tt.version, got, tt.want)
		}
	}
}

func TestPinEdits(t *testing.T) {
	engine := "github.com/ctrlbugs/corpus/engine => ../../engine"
	tests := []struct {
		name      string
		replace   []string
		moved     []modVersion
		wantEdits []string
		wantErr   string
	}{
		{
			name:    "crossplane: no replace of a moved module, nothing to edit",
			replace: []string{engine},
			moved:   []modVersion{{xp, "v2.3.0"}, {xpRuntime, "v2.3.0"}, {apis, "v2.0.0-20260424160951-8f231230ebb6"}},
		},
		{
			name:      "cluster-api: the api replace moves with the release",
			replace:   []string{capiAPI + " => " + capiAPI + " v1.14.2", engine},
			moved:     []modVersion{{capi, "v1.15.0"}, {capiAPI, "v1.15.0"}},
			wantEdits: []string{"-replace=" + capiAPI + "=" + capiAPI + "@v1.15.0"},
		},
		{
			name:    "already there",
			replace: []string{capiAPI + " => " + capiAPI + " v1.14.2"},
			moved:   []modVersion{{capi, "v1.14.2"}, {capiAPI, "v1.14.2"}},
		},
		{
			name:      "a version-specific replace becomes one for every version",
			replace:   []string{capiAPI + " v0.0.0-00010101000000-000000000000 => " + capiAPI + " v1.14.2"},
			moved:     []modVersion{{capiAPI, "v1.15.0"}},
			wantEdits: []string{"-dropreplace=" + capiAPI + "@v0.0.0-00010101000000-000000000000", "-replace=" + capiAPI + "=" + capiAPI + "@v1.15.0"},
		},
		{
			name:    "a directory cannot be moved",
			replace: []string{apis + " => ../apis"},
			moved:   []modVersion{{apis, "v2.3.0"}},
			wantErr: apis + ": the project's go.mod replaces it with the directory ../apis",
		},
		{
			name:    "another module cannot be moved",
			replace: []string{apis + " => a.io/fork v1.0.0"},
			moved:   []modVersion{{apis, "v2.3.0"}},
			wantErr: apis + ": the project's go.mod replaces it with a.io/fork@v1.0.0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := modJSON(t, "a.io/ctrlbugs", nil, tt.replace)
			edits, notes, err := pinEdits(project, tt.moved)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(edits, tt.wantEdits) {
				t.Errorf("edits %q, want %q", edits, tt.wantEdits)
			}
			if (len(notes) == 0) != (len(tt.wantEdits) == 0) {
				t.Errorf("notes %q for edits %q", notes, edits)
			}
		})
	}
}

func TestCheckPins(t *testing.T) {
	// What `go list -m -e -json` prints, concatenated.
	listing := `{"Path": "github.com/crossplane/crossplane/v2", "Version": "v2.3.0"}
{"Path": "github.com/crossplane/crossplane-runtime/v2", "Version": "v2.4.0"}
{"Path": "sigs.k8s.io/cluster-api/api", "Version": "v1.14.2", "Replace": {"Path": "sigs.k8s.io/cluster-api/api", "Version": "v1.15.0"}}
{"Path": "a.io/dir", "Version": "v1.0.0", "Replace": {"Path": "../dir"}}
{"Path": "a.io/gone", "Error": {"Err": "module a.io/gone: not a known dependency"}}
`
	listed, err := decodeListed(strings.NewReader(listing))
	if err != nil {
		t.Fatal(err)
	}
	const in = "in projects/p/go.mod after go mod tidy"
	tests := []struct {
		name string
		want []modVersion
		out  []string
	}{
		{"aligned", []modVersion{{xp, "v2.3.0"}, {capiAPI, "v1.15.0"}}, nil},
		{"left behind", []modVersion{{xpRuntime, "v2.3.0"}}, []string{xpRuntime + ": at v2.4.0 " + in + ", want v2.3.0"}},
		{"replace elsewhere", []modVersion{{capiAPI, "v1.16.0"}}, []string{capiAPI + ": at v1.15.0 (replace) " + in + ", want v1.16.0"}},
		{"directory", []modVersion{{"a.io/dir", "v1.0.0"}}, []string{"a.io/dir: replaced by ../dir " + in + ", want v1.0.0"}},
		{"error", []modVersion{{"a.io/gone", "v1.0.0"}}, []string{"a.io/gone: module a.io/gone: not a known dependency " + in + ", want v1.0.0"}},
		{"absent", []modVersion{{"a.io/never", "v1.0.0"}}, []string{"a.io/never: not in the build list " + in + ", want v1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkPins(in, tt.want, listed); !slices.Equal(got, tt.out) {
				t.Errorf("got %q\nwant %q", got, tt.out)
			}
		})
	}
}

func TestDropEdits(t *testing.T) {
	own := modJSON(t, "example.com/p", []string{"a.io/apis v1.0.0", "a.io/m v1.0.0"}, []string{"a.io/apis => a.io/apis v1.0.1"})
	got := dropEdits(own, []string{"a.io/apis", "a.io/absent"})
	want := []string{"-droprequire=a.io/apis", "-dropreplace=a.io/apis"}
	if !slices.Equal(got, want) {
		t.Errorf("dropEdits = %v, want %v", got, want)
	}
}

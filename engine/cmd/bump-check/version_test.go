package main

import (
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"v1.9.3", "v1.9.3", 0},
		{"v1.9.3", "v1.10.0", -1}, // numeric, not lexical
		{"v1.10.1", "v1.9.6", 1},
		{"v2.0.0", "v1.99.99", 1},
		{"v1.0.0-rc.1", "v1.0.0", -1}, // a release ranks above its pre-releases
		{"v1.0.0-alpha", "v1.0.0-alpha.1", -1},
		{"v1.0.0-alpha.1", "v1.0.0-alpha.beta", -1}, // numeric below alphanumeric
		{"v1.0.0-rc.2", "v1.0.0-rc.10", -1},
		{"v1.0.0-beta", "v1.0.0-alpha", 1},
		{"v0.0.0-20220411205349-bde1400a84be", "v0.0.0-20230101000000-aaaaaaaaaaaa", -1}, // pseudo-versions
		{"v2.0.0+incompatible", "v2.0.0", 0},                                             // build metadata is ignored
	}
	for _, tt := range tests {
		a, err := parseVersion(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseVersion(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := compare(a, b); got != tt.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := compare(b, a); got != -tt.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestParseVersionRejects(t *testing.T) {
	for _, s := range []string{"", "1.2.3", "v1.2", "v1.2.3.4", "v1.02.3", "v1.x.3", "v1.2.3-", "v1.2.3-a..b", "latest"} {
		if _, err := parseVersion(s); err == nil {
			t.Errorf("parseVersion(%q) accepted it", s)
		}
	}
}

func TestNewerReleases(t *testing.T) {
	// What the registry lists for source-controller (it need not list the pin).
	served := []string{"v1.8.5", "v1.9.4", "v1.9.5", "v1.9.6", "v1.10.0", "v1.10.1"}
	tests := []struct {
		name   string
		listed []string
		pinned string
		pre    bool
		max    int
		want   []string
	}{
		{"newest three", served, "v1.9.3", false, 3, []string{"v1.9.6", "v1.10.0", "v1.10.1"}},
		{"all", served, "v1.9.3", false, 0, []string{"v1.9.4", "v1.9.5", "v1.9.6", "v1.10.0", "v1.10.1"}},
		{"pin is newest", served, "v1.10.1", false, 3, []string{}},
		{"pin newer than all", served, "v1.11.0", false, 3, []string{}},
		{"pre-releases skipped", []string{"v1.2.0", "v1.3.0-rc.1"}, "v1.1.0", false, 3, []string{"v1.2.0"}},
		{"pre-releases asked for", []string{"v1.2.0", "v1.3.0-rc.1"}, "v1.1.0", true, 3, []string{"v1.2.0", "v1.3.0-rc.1"}},
		{"unsorted, duplicated", []string{"v1.3.0", "v1.2.0", "v1.3.0"}, "v1.0.0", false, 0, []string{"v1.2.0", "v1.3.0"}},
		{"pseudo-version pin", []string{"v0.1.0"}, "v0.0.0-20220411205349-bde1400a84be", false, 3, []string{"v0.1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newerReleases(tt.listed, tt.pinned, tt.pre, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := newerReleases([]string{"v1.0.0", "bogus"}, "v0.1.0", false, 3); err == nil {
		t.Error("a listed version that does not parse was accepted")
	}
}

func TestExplicitVersions(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"v1.8.0", []string{"v1.8.0"}, false},
		{"v1.8.0,v1.9.0", []string{"v1.8.0", "v1.9.0"}, false},
		{" v1.8.0  v1.9.0 ", []string{"v1.8.0", "v1.9.0"}, false},
		{"1.8.0", nil, true},
	}
	for _, tt := range tests {
		got, err := explicitVersions(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("explicitVersions(%q) error %v, want error %v", tt.in, err, tt.wantErr)
		}
		if !tt.wantErr && !slices.Equal(got, tt.want) {
			t.Errorf("explicitVersions(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestProbeCandidates(t *testing.T) {
	tests := []struct {
		pinned  string
		want    string
		wantErr bool
	}{
		{"v2.4.0", "v2.4.1 v2.4.2 v2.4.3 v2.4.4 v2.5.0 v2.5.1 v2.5.2 v2.5.3 v2.6.0 v2.6.1 v2.6.2 v2.6.3", false},
		{"v1.9.3+incompatible", "v1.9.4 v1.9.5 v1.9.6 v1.9.7 v1.10.0 v1.10.1 v1.10.2 v1.10.3 v1.11.0 v1.11.1 v1.11.2 v1.11.3", false},
		{"v0.9.4-rc.1", "v0.9.5 v0.9.6 v0.9.7 v0.9.8 v0.10.0 v0.10.1 v0.10.2 v0.10.3 v0.11.0 v0.11.1 v0.11.2 v0.11.3", false},
		{"2.4.0", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.pinned, func(t *testing.T) {
			got, err := probeCandidates(tc.pinned)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}

package finding

import (
	"reflect"
	"strings"
	"testing"
)

func TestVerdictRoundTrip(t *testing.T) {
	runs := func(n int) *int { return &n }
	const h = "sha256:0123abcd"
	tests := []struct {
		name string
		v    Verdict
		// line is the text enginetest printed before Verdict existed, for
		// this value (its Printf formats, expanded by hand).
		line string
	}{
		{"broken write-up", Verdict{ID: "sample-f2", Line: Broken, Detail: `findings/sample/sample-f2.md: primary.expect: "held": want holds or fails`},
			`sample-f2: HARNESS-BROKEN findings/sample/sample-f2.md: primary.expect: "held": want holds or fails`},
		{"broken trace", Verdict{ID: "fluxcd-f1", Line: Broken, Detail: "no recorded trace: open x: no such file"},
			"fluxcd-f1: HARNESS-BROKEN no recorded trace: open x: no such file"},
		{"recorded", Verdict{ID: "kro-f3", Line: Recorded, File: "findings/kro/kro-f3.trace.jsonl", Bytes: 12345, Trace: h},
			"kro-f3: recorded findings/kro/kro-f3.trace.jsonl (12345 bytes) trace=" + h},
		{"reproduced", Verdict{ID: "fluxcd-f1", Line: Reproduce, Claim: ClaimReproduced, Trace: h},
			"fluxcd-f1: REPRODUCED as recorded trace=" + h},
		{"refuted, every variant", Verdict{ID: "sample-f1", Line: Reproduce, Claim: ClaimRefuted, Trace: h, Variants: &Count{4, 4}},
			"sample-f1: REFUTED as recorded trace=" + h + " variants=4/4"},
		{"reproduced, upstream", Verdict{ID: "fluxcd-f1", Line: Reproduce, Claim: ClaimRefuted, Trace: h, Variants: &Count{4, 4},
			Upstream: "fluxcd/source-controller@v1.9.3,controller-runtime@v0.24.1"},
			"fluxcd-f1: REFUTED as recorded trace=" + h + " variants=4/4 upstream=fluxcd/source-controller@v1.9.3,controller-runtime@v0.24.1"},
		{"verify, also, upstream", Verdict{ID: "karpenter-12", Line: Verify, Claim: ClaimReproduced, Control: ControlClean,
			Also: []Also{{Label: "lag5s", Digest: true}}, Trace: h, Upstream: "karpenter@v1.15.0"},
			"karpenter-12 REPRODUCED control=clean also=lag5s:digest:ok trace=" + h + " upstream=karpenter@v1.15.0"},
		{"reproduce, no claim", Verdict{ID: "capi-f9", Line: Reproduce, Trace: h},
			"capi-f9:  as recorded trace=" + h},
		{"reproduce mismatch", Verdict{ID: "fluxcd-f2", Line: Reproduce, Claim: ClaimReproduced, Mismatch: "the controller now behaves differently from the trace at step 3: other call"},
			"fluxcd-f2: MISMATCH with the recorded REPRODUCED: the controller now behaves differently from the trace at step 3: other call"},
		{"verify", Verdict{ID: "crossplane-2", Line: Verify, Claim: ClaimRefuted, Control: ControlClean, Trace: h},
			"crossplane-2 REFUTED control=clean trace=" + h},
		{"verify on a release", Verdict{ID: "crossplane-2", Release: "v2.2.1", Line: Verify, Claim: ClaimRefuted, Control: ControlClean, Trace: h},
			"crossplane-2@v2.2.1 REFUTED control=clean trace=" + h},
		{"verify record on a release", Verdict{ID: "crossplane-2", Release: "v2.2.1-rc.1", Line: Recorded, File: "findings/crossplane/crossplane-2.v2.2.1.trace.jsonl", Bytes: 9, Trace: h},
			"crossplane-2@v2.2.1-rc.1: recorded findings/crossplane/crossplane-2.v2.2.1.trace.jsonl (9 bytes) trace=" + h},
		{"verify, variants, also", Verdict{ID: "karpenter-f4", Line: Verify, Claim: ClaimReproduced, Variants: &Count{3, 3}, Control: ControlClean,
			Also: []Also{{Label: "watch-list"}, {Label: "standby-watch-list"}}, Trace: h},
			"karpenter-f4 REPRODUCED variants=3/3 control=clean also=watch-list:ok,standby-watch-list:ok trace=" + h},
		{"verify, also from the digest", Verdict{ID: "karpenter-12", Line: Verify, Claim: ClaimReproduced, Control: ControlClean,
			Also: []Also{{Label: "lag5s", Digest: true}, {Label: "pdb", Digest: true, Problem: Underscored("oracle o holds in all 3 runs (digest of x.json)")}, {Label: "ran"}}, Trace: h},
			"karpenter-12 REPRODUCED control=clean also=lag5s:digest:ok,pdb:digest:oracle_o_holds_in_all_3_runs_(digest_of_x.json),ran:ok trace=" + h},
		{"verify, everything wrong", Verdict{ID: "kro-f1", Line: Verify, Mismatch: "oracle x was expected to fail but holds (ev (a), b)", Variants: &Count{2, 4},
			Control: Underscored("oracle x fails in run \"a\": ev"),
			Also:    []Also{{Label: "ordering", Problem: Underscored("harness error: a, b: c")}, {Label: "spaced"}}, Trace: h},
			`kro-f1 MISMATCH(oracle x was expected to fail but holds (ev (a), b)) variants=2/4 control=oracle_x_fails_in_run_"a":_ev also=ordering:harness_error:_a,_b:_c,spaced:ok trace=` + h},
		{"verify, control harness error", Verdict{ID: "kro-f1", Line: Verify, Claim: ClaimReproduced, Control: "harness error: start: boom", Trace: h},
			"kro-f1 REPRODUCED control=harness error: start: boom trace=" + h},
		{"bump still reproduces", Verdict{ID: "fluxcd-f2", Line: Bump, Bump: StillReproduces},
			"fluxcd-f2: still reproduces"},
		{"bump still refuted, runs", Verdict{ID: "fluxcd-f1", Line: Bump, Bump: StillRefuted, Runs: runs(4)},
			"fluxcd-f1: still refuted (oracle holds in all 4 runs)"},
		{"bump still refuted, variants", Verdict{ID: "fluxcd-f1", Line: Bump, Bump: StillRefuted, Variants: &Count{4, 4}},
			"fluxcd-f1: still refuted variants=4/4"},
		{"bump no longer reproduces", Verdict{ID: "fluxcd-f2", Line: Bump, Bump: NoLongerReproduces, Detail: "oracle y holds in all 3 runs"},
			"fluxcd-f2: no longer reproduces (candidate fixed-upstream): oracle y holds in all 3 runs"},
		{"bump no longer reproduces, variants", Verdict{ID: "fluxcd-f2", Line: Bump, Bump: NoLongerReproduces, Variants: &Count{1, 3}, Detail: "variant \"b\": oracle y holds (ev), the finding claims it fails in every variant"},
			"fluxcd-f2: no longer reproduces (candidate fixed-upstream) variants=1/3: variant \"b\": oracle y holds (ev), the finding claims it fails in every variant"},
		{"bump refuted claim reproduces, runs", Verdict{ID: "fluxcd-f1", Line: Bump, Bump: RefutedNowReproduces, Runs: runs(0), Detail: "the search produced no run"},
			"fluxcd-f1: the refuted claim now reproduces (oracle holds in all 0 runs): the search produced no run"},
		{"bump harness broken", Verdict{ID: "fluxcd-f1", Line: Bump, Bump: BumpHarnessBroken, Detail: "start controllers: boom"},
			"fluxcd-f1: harness broken: start controllers: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.String(); got != tc.line {
				t.Errorf("String:\n got %s\nwant %s", got, tc.line)
			}
			got, err := Parse(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.v) {
				t.Errorf("Parse(%q):\n got %#v\nwant %#v", tc.line, got, tc.v)
			}
			id, release, ok := LineID(tc.line)
			if !ok || id != tc.v.ID || release != tc.v.Release {
				t.Errorf("LineID = %q, %q, %v; want %q, %q", id, release, ok, tc.v.ID, tc.v.Release)
			}
		})
	}
}

func TestParseNotAVerdict(t *testing.T) {
	for line, want := range map[string]string{
		"=== RUN   TestFindings/crossplane-2": "not a finding's verdict line",
		"fluxcd-f1: still holds":              "does not know",
		"fluxcd-f1: still refutedly":          "does not know",
		"fluxcd-f1: still refuted extra":      "not a bump line",
		"fluxcd-f1 REFUTED control=clean":     "not a verify line",
		"fluxcd-f1: recorded x trace=y":       "not a record line",
		"verify: all findings as recorded":    "not a finding's verdict line",
	} {
		_, err := Parse(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", line, err, want)
		}
	}
}

func TestVerdictOK(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want bool
	}{
		{Verdict{Line: Broken}, false},
		{Verdict{Line: Recorded}, true},
		{Verdict{Line: Reproduce, Claim: ClaimRefuted}, true},
		{Verdict{Line: Reproduce, Mismatch: "x"}, false},
		{Verdict{Line: Verify, Control: ControlClean, Also: []Also{{Label: "a"}}}, true},
		{Verdict{Line: Verify, Control: "x"}, false},
		{Verdict{Line: Verify, Control: ControlClean, Also: []Also{{Label: "a", Problem: "p"}}}, false},
		{Verdict{Line: Verify, Control: ControlClean, Also: []Also{{Label: "a", Digest: true}}}, true},
		{Verdict{Line: Verify, Control: ControlClean, Also: []Also{{Label: "a", Digest: true, Problem: "p"}}}, false},
		{Verdict{Line: Bump, Bump: BumpResultOf(true, "")}, true},
		{Verdict{Line: Bump, Bump: BumpResultOf(false, "p")}, false},
	} {
		if got := tc.v.OK(); got != tc.want {
			t.Errorf("%+v.OK() = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestParseSeen: lines make verify printed on 2026-11-26 (one of each
// shape it prints when every finding verifies) read back and print again
// byte for byte.
func TestParseSeen(t *testing.T) {
	for _, line := range []string{
		`capi-2 REPRODUCED variants=5/5 control=clean also=watch-list:ok,standby:ok,standby-watch-list:ok trace=sha256:5e81e9e5baf898a93b7313f0fe0eb569fedde37a3ffe24e2a84ac5545d8d6c04`,
		`fluxcd-f1 REFUTED variants=14/14 control=clean trace=sha256:add8ca01a75a2c84c81e21c6cebb664ac73913ee523c35241ba8a1d39d9f1142`,
		`karpenter-2 REFUTED variants=77/77 control=clean also=unlaunched:ok,unregistered:ok,after-initialization:ok trace=sha256:09c7d29976d741d59e32d94f69a0bfc0de6efc193284172535b3e884f7786548`,
		`kro-n1 REPRODUCED control=clean trace=sha256:d7a7f7456a08360e058d0d74b674523127dafd9b872dd6dc4973250dcbdb039c`,
		`crossplane-2@v2.2.1 REFUTED control=clean trace=sha256:6d42e9c66feeeac5204f146ef2d41689ac2b5d2eb87648edcb8c3c7f35f579f8`,
	} {
		v, err := Parse(line)
		if err != nil {
			t.Error(err)
			continue
		}
		if !v.OK() {
			t.Errorf("%q: not OK", line)
		}
		if got := v.String(); got != line {
			t.Errorf("Parse(%q).String() = %q", line, got)
		}
	}
}

package serverversion

import "testing"

// TestWatchListByRelease pins the gate's defaults as kube-apiserver records
// them (pkg/features/kube_features.go: alpha off 1.27, beta on 1.32, off
// 1.33, on 1.34).
func TestWatchListByRelease(t *testing.T) {
	for _, tc := range []struct {
		release string
		on      bool
	}{
		{"1.27", false}, {"1.30", false}, {"1.31", false}, {"1.32", true},
		{"1.33", false}, {"1.34", true}, {"1.35", true}, {"1.36", true},
	} {
		t.Run(tc.release, func(t *testing.T) {
			f, err := For(tc.release)
			if err != nil {
				t.Fatal(err)
			}
			if f.Consistent != tc.on {
				t.Errorf("%s: consistent first list = %v, want %v (%s)", tc.release, f.Consistent, tc.on, f.Describe())
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "1.26", "1.37", "v1.34", "1.34.2", "2.0", "1.x"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

package enginetest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

const smokeHelperEnv = "CTRLBUGS_SMOKE_HELPER"

// TestSmokeHelper is the child process of TestSmokeRunTwice: a Smoke whose
// two runs are alike ("same") or hold a differently named object
// ("differs").
func TestSmokeHelper(t *testing.T) {
	mode := os.Getenv(smokeHelperEnv)
	if mode == "" {
		t.Skip("run by TestSmokeRunTwice in a child process")
	}
	run, checked := 0, 0
	enginetest.Smoke{
		Config: func(t *testing.T) *explore.Config {
			s := enginetest.Scheme(t)
			name := "cm"
			if mode == "differs" && run == 1 {
				name = "other"
			}
			run++
			return &explore.Config{
				Scenario: "smoke-helper",
				Cluster:  explore.Cluster{Scheme: s},
				Objects:  enginetest.Unstructured(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}),
				Horizon:  time.Minute,
			}
		},
		Check: func(t *testing.T, r *explore.Result, tr *trace.Trace) { checked++ },
	}.RunTwice(t)
	t.Logf("SMOKE-HELPER checked %d runs", checked)
}

// TestSmokeRunTwice: Smoke.RunTwice checks both runs and fails when their
// traces differ.
func TestSmokeRunTwice(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		wantErr bool
		want    string
	}{
		{"same", false, "SMOKE-HELPER checked 2 runs"},
		{"differs", true, "two runs differ"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSmokeHelper$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), smokeHelperEnv+"="+tc.mode)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantErr {
				t.Fatalf("child error %v, want error %v; output:\n%s", err, tc.wantErr, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("child output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

package enginetest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
)

const immortalHelperEnv = "CTRLBUGS_IMMORTAL_HELPER"

// sleepForever is what some upstreams start and never stop (Cluster API's
// ssa.NewCache: a TTL sweep every 10h, no context).
func sleepForever() {
	for {
		time.Sleep(10 * time.Hour)
	}
}

// TestImmortalHelper is the child process of TestImmortal: a bubble that
// leaves sleepForever running, declared immortal or not.
func TestImmortalHelper(t *testing.T) {
	if os.Getenv(immortalHelperEnv) == "" {
		t.Skip("run by TestImmortal in a child process")
	}
	if os.Getenv(immortalHelperEnv) == "declared" {
		enginetest.RegisterImmortal(&engine.Project{Immortal: []string{"github.com/ctrlbugs/corpus/engine/enginetest_test.sleepForever"}})
	}
	enginetest.Bubble(t, 1, func(t *testing.T) { go sleepForever() })
	t.Log("IMMORTAL-HELPER bubble returned")
}

// TestImmortal: a goroutine left blocked when a bubble ends is tolerated
// only if the project declared its function immortal; otherwise the run
// still dies with synctest's deadlock panic, naming the goroutine.
func TestImmortal(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		wantErr bool
		want    string
	}{
		{"declared", false, "IMMORTAL-HELPER bubble returned"},
		{"undeclared", true, "not declared immortal by the project"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestImmortalHelper$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), immortalHelperEnv+"="+tc.mode)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantErr {
				t.Fatalf("child error %v, want error %v; output:\n%s", err, tc.wantErr, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("child output lacks %q:\n%s", tc.want, out)
			}
			if tc.wantErr && !strings.Contains(string(out), "sleepForever") {
				t.Fatalf("the panic does not name the leftover goroutine:\n%s", out)
			}
		})
	}
}

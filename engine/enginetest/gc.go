package enginetest

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for a process that runs
// scenarios, unless the environment sets GOGC.
//
// Why: a run allocates much and keeps little (each write's managed-fields
// computation, patch helpers' JSON, deep copies for caches), so at Go's
// default of 100 the collector took about a quarter of a search's CPU
// (capi md-rollout-supersede-moments: 20.7 s of user time at 100, 15.0 s at
// 400, heap peak 196 MB -> 379 MB). At 400 a process's heap stays well
// under a gigabyte on every committed scenario. Nothing a run records
// depends on when the collector runs: traces are byte-identical at any
// setting (make verify).
const gcPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// Package enginetest is the engine's go test face. testing/synctest offers
// only Test(t, f) and Wait(), so every run of real controllers on virtual
// time enters a bubble through here, with the process-wide sources of
// randomness that upstream code uses pinned for the run:
//
//   - math/rand's global source (apimachinery's wait.Jitter, retry backoff)
//     is reseeded; this needs `//go:debug randseednop=0` in the test
//     package (Go 1.24 made rand.Seed a no-op by default). Bubble fails the
//     test when the directive is missing, instead of producing traces that
//     silently differ from run to run.
//   - crypto/rand (and so google/uuid, controller-runtime's reconcileIDs) is
//     made deterministic with testing/cryptotest.SetGlobalRandom.
//
// Bubbles must not run in parallel (both settings are process-wide).
//
// A finding's claim about every variant is checked by running each variant
// alone in a bubble, from one listing of the variants per process
// (plan.go: the variant starts where listing would have left its bubble),
// spread over a pool of helper processes (pool.go).
package enginetest

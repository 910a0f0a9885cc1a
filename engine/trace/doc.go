// Package trace defines the engine's trace format: JSON Lines, one record
// per line, versioned by Schema. A trace is a header, then one record per
// step (a reconcile), user action or note, then the records the oracles
// judged (writes, panics, snapshots, invariants, the final state: enough to
// judge the trace again offline), then a final record with the state hash
// and the oracles' verdicts. Traces are deterministic: every time is virtual
// (an offset from the run's start), every uid and generated name comes from
// the engine's counters, so the same scenario and seed give the same bytes.
//
// trace knows nothing of who emits records; it borrows the oracle
// package's record types.
package trace

// Schema is the version of the record layout below. Bump it on any change
// that would make an old trace decode differently.
const Schema = 3

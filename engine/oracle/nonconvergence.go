package oracle

import (
	"fmt"
	"strings"
)

// Snapshot summarises the cluster after one step of a run, for
// [NonConvergence].
type Snapshot struct {
	// Step is the step number.
	Step int `json:"step"`
	// Hash identifies the normalised cluster state after the step. It
	// should leave out what changes on every write whatever the
	// controllers intend (resourceVersion, managedFields, timestamps), or
	// every state looks new.
	Hash string `json:"hash"`
	// Writes counts the writes in this step that changed stored state.
	Writes int `json:"writes,omitempty"`
	// Pending counts the work left after the step: queued requests plus
	// armed timers.
	Pending int `json:"pending,omitempty"`
	// TimedHash is Hash with timestamps kept (resourceVersion and
	// managedFields still left out), recorded only for a nonConvergence
	// oracle that keeps them ([DefineNonConvergenceTimed]): a loop that
	// rewrites only timestamps (a condition's lastTransitionTime flipping
	// between two values) recurs in it and not in Hash.
	TimedHash string `json:"timedHash,omitempty"`
}

// minTail is the fewest trailing snapshots [NonConvergence] looks at.
const minTail = 10

// Tail is how many trailing snapshots of a run of n steps NonConvergence
// judges with a bound: the bound, but no more than half the run (and no
// fewer than 10 when the bound allows), so that a burst that ended long
// before the run did is not taken for writes that never stop.
func Tail(bound, n int) int { return min(bound, max(n/2, minTail)) }

// NonConvergence judges whether a run settled. history is one run's
// snapshots in step order; bound is how many consecutive writing steps at
// the end of the run count as "writes that never stop" (>= 1). The tail
// judged is the last Tail(bound, len(history)) snapshots: at most bound,
// and at most half the run's own steps (at least 10): a scenario's bound
// comes from its maxSteps, and a run that stopped at its horizon long
// before had a burst of writes far from its end that was no cycle at its
// end.
//
// The rules, in order:
//
//  1. If the last snapshot has no pending work the run was quiescent at
//     its end: the oracle holds, whatever happened before.
//  2. If the snapshots of the tail all wrote, writes never stopped: fails.
//  3. If a state recurs after different states in between, with writes
//     between the two occurrences and pending work at the second, and the
//     second occurrence is in the tail, the controllers are still cycling
//     when the run ends: fails, naming the first such recurrence. A cycle
//     that stopped earlier (a retry loop while a perturbation lasted, then
//     quiet) is not non-convergence.
//  4. Otherwise it holds: the run ended with work pending (typically
//     periodic timers) but neither kept writing nor cycled.
//
// An empty history holds; bound < 1 is an error.
func NonConvergence(history []Snapshot, bound int) Verdict {
	v := Verdict{Type: TypeNonConvergence}
	if bound < 1 {
		v.Err = fmt.Sprintf("bound %d: must be at least 1", bound)
		return v
	}
	if len(history) == 0 {
		v.Holds = true
		v.Evidence = "no steps recorded"
		return v
	}
	last := history[len(history)-1]
	if last.Pending == 0 {
		v.Holds = true
		v.Evidence = fmt.Sprintf("quiescent after step %d", last.Step)
		return v
	}
	bound = Tail(bound, len(history))
	if len(history) >= bound {
		tail := history[len(history)-bound:]
		writes, all := 0, true
		for _, s := range tail {
			if s.Writes == 0 {
				all = false
				break
			}
			writes += s.Writes
		}
		if all {
			v.Evidence = fmt.Sprintf("writes never stopped: each of the last %d steps (%d..%d) wrote, %d writes in all, %d pending at the end",
				bound, tail[0].Step, last.Step, writes, last.Pending)
			return v
		}
	}
	// prefix[i] is the number of writes in history[:i].
	prefix := make([]int, len(history)+1)
	for i, s := range history {
		prefix[i+1] = prefix[i] + s.Writes
	}
	lastSeen := make(map[string]int, len(history))
	tail := len(history) - bound
	for j, s := range history {
		i, seen := lastSeen[s.Hash]
		lastSeen[s.Hash] = j
		// i is the latest earlier occurrence, so every state strictly
		// between i and j differs from this one: there are some iff j-i >= 2.
		if !seen || j-i < 2 || s.Pending == 0 || j < tail {
			continue
		}
		if w := prefix[j+1] - prefix[i+1]; w > 0 {
			v.Evidence = fmt.Sprintf("cycle: state %s after step %d recurs after step %d, through %d other states and %d writes, with %d pending",
				short(s.Hash), history[i].Step, s.Step, j-i-1, w, s.Pending)
			return v
		}
	}
	v.Holds = true
	v.Evidence = fmt.Sprintf("no cycle and writes stopped; %d pending after step %d", last.Pending, last.Step)
	return v
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// timedSuffix marks the definition of a nonConvergence oracle that keeps
// timestamps in the state it hashes.
const timedSuffix = ", timestamps hashed"

// DefineNonConvergenceTimed is the definition of a nonConvergence oracle
// that judges the snapshots' hashes with timestamps kept
// ([Snapshot].TimedHash).
func DefineNonConvergenceTimed(bound int) string { return DefineNonConvergence(bound) + timedSuffix }

func judgeNonConvergence(s Spec, r *Records) Verdict {
	def, timed := strings.CutSuffix(s.Def, timedSuffix)
	var bound int
	if _, err := fmt.Sscanf(def, TypeNonConvergence+": bound %d steps", &bound); err != nil || DefineNonConvergence(bound) != def {
		return Verdict{Type: TypeNonConvergence, Err: fmt.Sprintf("definition %q: want %q or %q", s.Def, DefineNonConvergence(10), DefineNonConvergenceTimed(10))}
	}
	history := r.Snapshots
	if timed {
		history = make([]Snapshot, len(r.Snapshots))
		for i, sn := range r.Snapshots {
			if sn.TimedHash == "" {
				return Verdict{Type: TypeNonConvergence, Err: fmt.Sprintf("snapshot of step %d has no hash with timestamps (recorded without an oracle that keeps them)", sn.Step)}
			}
			sn.Hash = sn.TimedHash
			history[i] = sn
		}
	}
	return NonConvergence(history, bound)
}

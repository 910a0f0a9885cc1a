package trace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// opLine is the one-line description of a call used by both renderers.
func opLine(o Op) string {
	var b strings.Builder
	call := strings.ToUpper(o.Verb.String())
	if o.Sub != "" {
		call += "/" + o.Sub
	}
	b.WriteString(call)
	if o.PatchType != "" && o.Verb == verb.Patch {
		b.WriteString(" (" + shortPatch(o.PatchType) + ")")
	}
	b.WriteString(" " + o.Kind)
	if o.Key != "" {
		b.WriteString(" " + o.Key)
	}
	switch {
	case o.Cached:
		fmt.Fprintf(&b, " [cache rev %d", o.ViewRev)
		if o.Stale() {
			fmt.Fprintf(&b, ", STALE: saw rv %s, server has %s", o.Observed, o.Current)
		}
		b.WriteString("]")
	case o.Verb == verb.Get:
		b.WriteString(" [live]")
	}
	if o.Pre != "" {
		b.WriteString(" precondition rv=" + o.Pre)
	}
	if o.Outcome != "ok" {
		b.WriteString(" -> " + o.Outcome)
	} else if o.After != "" {
		if o.After == o.Before {
			b.WriteString(" -> ok, no-op (rv " + o.After + ")")
		} else if o.Before != "" {
			b.WriteString(" -> ok rv " + o.Before + "→" + o.After)
		} else {
			b.WriteString(" -> ok rv " + o.After)
		}
	} else if o.Verb == verb.List {
		b.WriteString(fmt.Sprintf(" -> %d items", o.Items))
	}
	return b.String()
}

func shortPatch(pt types.PatchType) string {
	switch pt {
	case types.MergePatchType:
		return "merge"
	case types.JSONPatchType:
		return "json"
	case types.StrategicMergePatchType:
		return "strategic"
	case types.ApplyYAMLPatchType:
		return "apply"
	}
	return string(pt)
}

// Timeline renders a trace as text, one block per step (at most maxSteps
// steps from the first; 0: all).
func Timeline(t *Trace, maxSteps int) string {
	return timeline(t, func(shown, _ int) bool { return maxSteps <= 0 || shown <= maxSteps }, nil, true)
}

// TimelineRange renders the steps from..to (0: to the end) of a trace,
// with the actions and notes among them; the rest is summarised.
func TimelineRange(t *Trace, from, to int) string {
	in := func(step int) bool { return step >= from && (to <= 0 || step <= to) }
	// An action or note is numbered by the last step before it.
	return timeline(t, func(_, step int) bool { return in(step) }, func(step int) bool { return in(step + 1) }, false)
}

// Story renders a trace as the story of what went wrong: every user
// action and note, and the steps around each of them, around every step
// an oracle first fails at (the marks), around the first and the last
// step, with context steps on each side; each stretch left out is
// summarised with its step range. A trace of at most 4×context+8 steps is
// rendered whole.
func Story(t *Trace, context int) string {
	if len(t.Steps) <= 4*context+8 {
		return Timeline(t, 0)
	}
	keep := storyKeep(t, context)
	return timeline(t, func(_, step int) bool { return keep[step] }, nil, false)
}

// storyKeep is the steps Story shows: context steps on each side of each
// anchor (actions, notes, first failures, the first and the last step).
func storyKeep(t *Trace, context int) map[int]bool {
	anchors := []int{1, len(t.Steps)}
	if len(t.Steps) > 0 {
		anchors[1] = t.Steps[len(t.Steps)-1].Step
	}
	for _, line := range t.Lines {
		switch r := line.(type) {
		case Action:
			anchors = append(anchors, r.Step, r.Step+1)
		case Note:
			anchors = append(anchors, r.Step, r.Step+1)
		}
	}
	for step := range writeMarks(t) {
		anchors = append(anchors, step)
	}
	if t.Final != nil {
		for _, v := range t.Final.Verdicts {
			if s := failedAfter(v); s > 0 {
				anchors = append(anchors, s)
			}
		}
	}
	keep := map[int]bool{}
	for _, a := range anchors {
		for s := a - context; s <= a+context; s++ {
			keep[s] = true
		}
	}
	return keep
}

// FirstFailure returns the earliest step a failing oracle points at: the
// step of the write it names, or the step after which an 'always' oracle
// was first false (0: none points at a step).
func FirstFailure(t *Trace) int {
	first := 0
	if t.Final == nil {
		return 0
	}
	for _, v := range t.Final.Verdicts {
		if v.Holds || v.Err != "" {
			continue
		}
		step := failedAfter(v)
		if v.At != nil {
			step = v.At.Step
		}
		if step > 0 && (first == 0 || step < first) {
			first = step
		}
	}
	return first
}

// firstFalse is the evidence an 'always' oracle gives when it fails
// (oracle.Judge: "first false after step N").
var firstFalse = regexp.MustCompile(`^first false after step (\d+)`)

// failedAfter is the step after which a failing 'always' oracle was first
// false, read from its evidence (0: it says none).
func failedAfter(v Verdict) int {
	if v.Holds || v.Err != "" {
		return 0
	}
	m := firstFalse.FindStringSubmatch(v.Evidence)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// firstFalseAt returns the failing 'always' oracles first false in the
// state after step.
func firstFalseAt(t *Trace, step int) []Verdict {
	if t.Final == nil {
		return nil
	}
	var out []Verdict
	for _, v := range t.Final.Verdicts {
		if failedAfter(v) == step {
			out = append(out, v)
		}
	}
	return out
}

// timeline renders the steps show accepts (shown counts the steps so far,
// this one included), and the actions and notes showLine accepts (nil:
// all), by the step they follow; with stop, the first step refused ends
// the timeline ("... n more steps"), otherwise each stretch refused is
// summarised.
func timeline(t *Trace, show func(shown, step int) bool, showLine func(step int) bool, stop bool) string {
	var b strings.Builder
	h := t.Header
	fmt.Fprintf(&b, "scenario %s (%s run", h.Scenario, orDefault(h.Run, "a"))
	if h.Variant != "" {
		b.WriteString(", " + h.Variant)
	}
	fmt.Fprintf(&b, ", seed %d) on %s\n", h.Seed, upstream(h))
	if len(h.Perturbations) > 0 {
		fmt.Fprintf(&b, "perturbations: %s\n", strings.Join(h.Perturbations, "; "))
	}
	if len(h.Ablations) > 0 {
		fmt.Fprintf(&b, "ABLATED semantics (unfaithful on purpose): %s\n", strings.Join(h.Ablations, ", "))
	}
	shown := 0
	marks := writeMarks(t)
	// An elided stretch of steps, summarised when the next thing shown
	// comes (or at the end).
	skipFrom, skipped := 0, 0
	flush := func() {
		if skipped > 0 {
			fmt.Fprintf(&b, "           ... %d steps not shown (#%d-#%d)\n", skipped, skipFrom, skipFrom+skipped-1)
			skipped = 0
		}
	}
	for _, line := range t.Lines {
		switch r := line.(type) {
		case Action:
			if showLine != nil && !showLine(r.Step) {
				continue
			}
			flush()
			fmt.Fprintf(&b, "%9s  user action %s: %s %s -> %s", r.T, r.Name, r.Op, r.Key, r.Outcome)
			if r.RV != "" {
				fmt.Fprintf(&b, " rv %s", r.RV)
			}
			b.WriteString("\n")
			for _, c := range r.Changed {
				fmt.Fprintf(&b, "%9s       %s\n", "", c)
			}
			for _, m := range marks.at(r.Step, r.RV) {
				fmt.Fprintf(&b, "%9s       ^ %s at this write\n", "", m.text)
			}
		case Note:
			if showLine != nil && !showLine(r.Step) {
				continue
			}
			flush()
			fmt.Fprintf(&b, "%9s  * %s\n", r.T, r.Text)
		case Step:
			shown++
			if !show(shown, r.Step) {
				if stop {
					fmt.Fprintf(&b, "  ... %d more steps\n", len(t.Steps)-shown+1)
					goto final
				}
				if skipped == 0 {
					skipFrom = r.Step
				}
				skipped++
				continue
			}
			flush()
			if r.Choice != nil {
				fmt.Fprintf(&b, "%9s  choice: %s (of %s)\n", r.T, r.Choice.Options[r.Choice.Chosen], strings.Join(r.Choice.Options, ", "))
			}
			res := r.Result
			if r.Requeue != "" {
				res += " " + r.Requeue
			}
			req := r.Request
			if r.Resumes > 0 {
				req = fmt.Sprintf("%s (resumes #%d)", req, r.Resumes)
			}
			fmt.Fprintf(&b, "%9s  #%d %s %s  => %s", r.T, r.Step, r.Controller, req, res)
			if r.Error != "" {
				fmt.Fprintf(&b, " (%s)", clip(r.Error, 160))
			}
			b.WriteString("\n")
			for _, n := range r.Notes {
				fmt.Fprintf(&b, "%9s     * %s\n", "", n)
			}
			for _, o := range r.Ops {
				fmt.Fprintf(&b, "%9s     %s\n", o.T, opLine(o))
				for _, c := range o.Changed {
					fmt.Fprintf(&b, "%9s         %s\n", "", c)
				}
				for _, m := range o.Managed {
					fmt.Fprintf(&b, "%9s         managedFields %s\n", "", m)
				}
				for _, m := range marks.at(r.Step, writtenRV(o)) {
					fmt.Fprintf(&b, "%9s         ^ %s at this write\n", "", m.text)
				}
			}
			for _, m := range marks.rest(r.Step) {
				fmt.Fprintf(&b, "%9s     ^ %s at the write of resourceVersion %s (in or just after this step)\n", "", m.text, m.rv)
			}
			for _, v := range firstFalseAt(t, r.Step) {
				fmt.Fprintf(&b, "%9s     ^ oracle %s (%s) FAILS: first false in the state after this step\n", "", v.Oracle, v.Type)
			}
			for _, e := range r.Events {
				fmt.Fprintf(&b, "%9s     event %s %s: %s\n", e.T, e.Type, e.Reason, clip(e.Message, 140))
			}
		}
	}
	flush()
final:
	if f := t.Final; f != nil {
		fmt.Fprintf(&b, "%9s  end: %s after %d steps, %d requests pending, state %s\n", f.T, f.Stop, f.Steps, f.Pending, f.StateHash)
		for _, a := range f.Applied {
			fmt.Fprintf(&b, "           perturbation applied %d times: %s\n", a.Times, a.Perturbation)
		}
		for _, v := range f.Verdicts {
			verdict, text := "HOLDS", v.Evidence
			if v.Err != "" {
				// The error first: it is why there is no verdict.
				verdict, text = "ERROR", v.Err
				if v.Evidence != "" {
					text += " [" + v.Evidence + "]"
				}
			} else if !v.Holds {
				verdict = "FAILS"
			}
			fmt.Fprintf(&b, "           oracle %s (%s): %s %s\n", v.Oracle, v.Type, verdict, clip(text, 300))
		}
	}
	return b.String()
}

// Mermaid renders a trace as a Mermaid sequence diagram: controllers and the
// API server as participants, stale reads and 409s marked.
func Mermaid(t *Trace, maxSteps int) string { return MermaidFrom(t, 1, maxSteps) }

// MermaidFrom is Mermaid starting at step from (earlier steps, and the
// actions and notes before it, are left out): a write-up can draw the part
// of a long run its account is about.
func MermaidFrom(t *Trace, from, maxSteps int) string { return mermaid(t, from, maxSteps, nil, false) }

// MermaidStory is the diagram of Story: every user action and note, and the
// steps around each of them, around each step an oracle first fails at and
// around the first and the last, context on each side; each stretch left
// out is one note with its step range. A long run's write-up draws it
// before (or instead of) the whole run's diagram.
func MermaidStory(t *Trace, context int) string {
	if len(t.Steps) <= 4*context+8 {
		return Mermaid(t, 0)
	}
	return mermaid(t, 1, 0, storyKeep(t, context), false)
}

// MermaidSummary is the diagram of what a run changed: the user's
// actions and the notes, the steps that wrote (or tried to) or ended in an
// error, a panic or a crash, with their writes and results only (reads
// left out), each stretch of other steps one note. A long run's write-up
// draws it before the whole run's diagram.
func MermaidSummary(t *Trace) string {
	keep := map[int]bool{}
	for _, s := range t.Steps {
		switch s.Result {
		case "error", "panic", "crash", "terminal":
			keep[s.Step] = true
		}
		for _, o := range s.Ops {
			if !o.Verb.IsRead() {
				keep[s.Step] = true
			}
		}
	}
	return mermaid(t, 1, 0, keep, true)
}

// mermaid renders the diagram from step from (at most maxSteps steps; with
// keep, only the steps it keeps, each stretch left out summarised; with
// writesOnly, a step's reads are left out).
func mermaid(t *Trace, from, maxSteps int, keep map[int]bool, writesOnly bool) string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	b.WriteString("    participant user\n")
	for _, c := range participants(t, from, maxSteps) {
		fmt.Fprintf(&b, "    participant %s as %s\n", mid(c), esc(c))
	}
	b.WriteString("    participant api as API server\n")
	if len(t.Header.Perturbations) > 0 {
		fmt.Fprintf(&b, "    Note over user,api: perturbations: %s\n", esc(strings.Join(t.Header.Perturbations, "; ")))
	}
	shown := 0
	skipFrom, skipTo := 0, 0 // a stretch of steps keep leaves out, not yet summarised
	marks := writeMarks(t)
	for _, line := range t.Lines {
		switch r := line.(type) {
		case Action:
			if r.Step < from-1 {
				continue
			}
			if skipFrom > 0 {
				fmt.Fprintf(&b, "    Note over api: steps %d-%d left out\n", skipFrom, skipTo)
				skipFrom = 0
			}
			fmt.Fprintf(&b, "    user->>api: t=%s %s %s\n", r.T, esc(r.Op), esc(r.Key))
			switch {
			case r.Outcome != "ok":
				fmt.Fprintf(&b, "    api--xuser: %s\n", esc(r.Outcome))
			case r.RV != "":
				fmt.Fprintf(&b, "    api-->>user: rv %s%s\n", r.RV, esc(changed(r.Changed)))
			default:
				b.WriteString("    api-->>user: ok, no change\n")
			}
			for _, m := range marks.at(r.Step, r.RV) {
				fmt.Fprintf(&b, "    Note right of api: %s at this write\n", esc(m.text))
			}
		case Note:
			if r.Step < from-1 {
				continue
			}
			if skipFrom > 0 {
				fmt.Fprintf(&b, "    Note over api: steps %d-%d left out\n", skipFrom, skipTo)
				skipFrom = 0
			}
			fmt.Fprintf(&b, "    Note over user,api: t=%s %s\n", r.T, esc(r.Text))
		case Step:
			if r.Step < from {
				continue
			}
			if keep != nil {
				if !keep[r.Step] {
					if skipFrom == 0 {
						skipFrom = r.Step
					}
					skipTo = r.Step
					continue
				}
				if skipFrom > 0 {
					fmt.Fprintf(&b, "    Note over api: steps %d-%d left out\n", skipFrom, skipTo)
					skipFrom = 0
				}
			}
			if from > 1 && shown == 0 {
				fmt.Fprintf(&b, "    Note over api: steps 1-%d left out\n", from-1)
			}
			shown++
			if maxSteps > 0 && shown > maxSteps {
				fmt.Fprintf(&b, "    Note over api: %d more steps\n", len(t.Steps)-(from-1)-maxSteps)
				break
			}
			c := mid(r.Controller)
			if r.Choice != nil {
				fmt.Fprintf(&b, "    Note over %s: choice: %s of %s\n", c, esc(r.Choice.Options[r.Choice.Chosen]), esc(strings.Join(r.Choice.Options, ", ")))
			}
			if r.Resumes > 0 {
				fmt.Fprintf(&b, "    Note over %s: step %d t=%s resumes step %d, reconcile %s\n", c, r.Step, r.T, r.Resumes, esc(r.Request))
			} else {
				fmt.Fprintf(&b, "    Note over %s: step %d t=%s reconcile %s\n", c, r.Step, r.T, esc(r.Request))
			}
			for _, n := range r.Notes {
				fmt.Fprintf(&b, "    Note over %s: %s\n", c, esc(n))
			}
			for _, o := range r.Ops {
				if writesOnly && o.Verb.IsRead() {
					continue
				}
				if o.Cached {
					if o.Stale() {
						fmt.Fprintf(&b, "    Note right of %s: STALE cache read of %s: rv %s, server has %s\n", c, esc(shortKind(o.Kind)), o.Observed, o.Current)
					}
					continue
				}
				fmt.Fprintf(&b, "    %s->>api: %s\n", c, esc(opCall(o)))
				switch {
				case o.Outcome != "ok":
					fmt.Fprintf(&b, "    api--x%s: %s\n", c, esc(o.Outcome))
				case o.Verb.IsRead():
					fmt.Fprintf(&b, "    api-->>%s: %s\n", c, esc(readReply(o)))
				case o.After != "" && o.After != o.Before:
					fmt.Fprintf(&b, "    api-->>%s: rv %s%s\n", c, esc(o.Before+"→"+o.After), esc(changed(o.Changed)))
				default:
					fmt.Fprintf(&b, "    api-->>%s: no-op (rv %s)\n", c, esc(orDefault(o.After, o.Before)))
				}
				for _, m := range marks.at(r.Step, writtenRV(o)) {
					fmt.Fprintf(&b, "    Note right of api: %s at this write\n", esc(m.text))
				}
			}
			for _, m := range marks.rest(r.Step) {
				fmt.Fprintf(&b, "    Note over %s: %s at the write of rv %s (in or just after this step)\n", c, esc(m.text), esc(m.rv))
			}
			res := r.Result
			if r.Requeue != "" {
				res += " " + r.Requeue
			}
			if r.Error != "" {
				res += " (" + clip(r.Error, 80) + ")"
			}
			fmt.Fprintf(&b, "    Note over %s: => %s\n", c, esc(res))
		}
		if maxSteps > 0 && shown > maxSteps {
			break
		}
	}
	if skipFrom > 0 {
		fmt.Fprintf(&b, "    Note over api: steps %d-%d left out\n", skipFrom, skipTo)
	}
	if f := t.Final; f != nil {
		fmt.Fprintf(&b, "    Note over user,api: end: %s after %d steps, t=%s\n", esc(f.Stop), f.Steps, f.T)
		for _, v := range f.Verdicts {
			verdict := "holds"
			switch {
			case v.Err != "":
				verdict = "ERROR " + v.Err
			case !v.Holds:
				verdict = "FAILS"
			}
			fmt.Fprintf(&b, "    Note over user,api: oracle %s: %s: %s\n", esc(v.Oracle), esc(verdict), esc(clip(v.Evidence, 120)))
		}
	}
	return b.String()
}

func readReply(o Op) string {
	if o.Verb == verb.List {
		return fmt.Sprintf("%d items", o.Items)
	}
	return "rv " + orDefault(o.Observed, "?")
}

// changed renders a write's change summary after its reply.
func changed(c []string) string {
	if len(c) == 0 {
		return ""
	}
	return ": " + clip(strings.Join(c, ", "), 160)
}

func opCall(o Op) string {
	s := strings.ToUpper(o.Verb.String())
	if o.Sub != "" {
		s += "/" + o.Sub
	}
	if o.PatchType != "" && o.Verb == verb.Patch {
		s += " " + shortPatch(o.PatchType)
	}
	s += " " + shortKind(o.Kind) + " " + o.Key
	if o.Pre != "" {
		s += " if rv=" + o.Pre
	}
	return s
}

// shortKind drops the group: "Bucket.source.toolkit.fluxcd.io" -> "Bucket".
func shortKind(k string) string {
	if i := strings.IndexByte(k, '.'); i > 0 {
		return k[:i]
	}
	return k
}

func mid(s string) string { return strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(s) }

// mermaidEscaper escapes text for a Mermaid sequence diagram's messages and
// notes: "#" starts an entity code and ";" ends a statement, so both are
// written as entity codes; "<" and ">" would be read as HTML; a newline
// ends the statement, so it becomes a line break.
var mermaidEscaper = strings.NewReplacer("#", "#35;", ";", "#59;", "<", "#lt;", ">", "#gt;", "\r", "", "\n", "<br/>")

func esc(s string) string { return mermaidEscaper.Replace(s) }

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func upstream(h Header) string {
	var parts []string
	for m, v := range h.Upstream {
		parts = append(parts, m+"@"+v)
	}
	if len(parts) == 0 {
		return "no upstream"
	}
	slicesSort(parts)
	return strings.Join(parts, ", ")
}

// participants lists the diagram's controller participants: every step's
// controller in order of first appearance (a process's controllers are
// "process/controller", one participant each), then the scenario's
// controllers that took no step under their own name or as a process.
// Only the steps drawn count: from step from on, at most maxSteps (0: all).
func participants(t *Trace, from, maxSteps int) []string {
	var out []string
	seen := map[string]bool{}
	n := 0
	for _, s := range t.Steps {
		if s.Step < from {
			continue
		}
		if maxSteps > 0 && n >= maxSteps {
			break
		}
		n++
		if !seen[s.Controller] {
			seen[s.Controller] = true
			out = append(out, s.Controller)
		}
	}
	for _, c := range t.Header.Controllers {
		if seen[c] {
			continue
		}
		asProcess := false
		for _, s := range out {
			if strings.HasPrefix(s, c+"/") {
				asProcess = true
				break
			}
		}
		if !asProcess {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// mark is a verdict's pointer at one write of the run (Verdict.At), drawn
// where the write is.
type mark struct {
	step  int
	rv    string
	text  string
	shown bool
}

// markSet is a trace's marks by step.
type markSet map[int][]*mark

// writeMarks collects the marks of the trace's verdicts.
func writeMarks(t *Trace) markSet {
	if t.Final == nil {
		return nil
	}
	var m markSet
	for _, v := range t.Final.Verdicts {
		if v.At == nil {
			continue
		}
		verdict := "FAILS"
		switch {
		case v.Err != "":
			verdict = "ERROR"
		case v.Holds:
			verdict = "holds"
		}
		if m == nil {
			m = markSet{}
		}
		m[v.At.Step] = append(m[v.At.Step], &mark{step: v.At.Step, rv: v.At.RV, text: fmt.Sprintf("oracle %s (%s) %s", v.Oracle, v.Type, verdict)})
	}
	return m
}

// at returns the marks of the write of step that produced rv ("": none),
// once each.
func (ms markSet) at(step int, rv string) []*mark {
	var out []*mark
	for _, m := range ms[step] {
		if rv != "" && m.rv == rv && !m.shown {
			m.shown = true
			out = append(out, m)
		}
	}
	return out
}

// rest returns the marks of step that no op or action of it showed (a
// write made by a call that wrote several objects, or between steps, by
// a runnable), once each.
func (ms markSet) rest(step int) []*mark {
	var out []*mark
	for _, m := range ms[step] {
		if !m.shown {
			m.shown = true
			out = append(out, m)
		}
	}
	return out
}

// writtenRV is the resourceVersion an accepted write produced; "" for a
// read, a refused write or a no-op.
func writtenRV(o Op) string {
	if o.Verb.IsRead() || o.Outcome != "ok" || o.After == o.Before {
		return ""
	}
	return o.After
}

package trace

import (
	"fmt"
	"strings"
)

// opLine is the one-line description of a call used by both renderers.
func opLine(o Op) string {
	var b strings.Builder
	verb := strings.ToUpper(o.Verb)
	if o.Sub != "" {
		verb += "/" + o.Sub
	}
	b.WriteString(verb)
	if o.PatchType != "" && o.Verb == "patch" {
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
	case o.Verb == "get":
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
	} else if o.Verb == "list" {
		b.WriteString(fmt.Sprintf(" -> %d items", o.Items))
	}
	return b.String()
}

func shortPatch(pt string) string {
	switch pt {
	case "application/merge-patch+json":
		return "merge"
	case "application/json-patch+json":
		return "json"
	case "application/strategic-merge-patch+json":
		return "strategic"
	case "application/apply-patch+yaml":
		return "apply"
	}
	return pt
}

// Timeline renders a trace as text, one block per step.
func Timeline(t *Trace, maxSteps int) string {
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
	for _, line := range t.Lines {
		switch r := line.(type) {
		case Action:
			fmt.Fprintf(&b, "%9s  user action %s: %s %s -> %s\n", r.T, r.Name, r.Op, r.Key, r.Outcome)
		case Step:
			shown++
			if maxSteps > 0 && shown > maxSteps {
				fmt.Fprintf(&b, "  ... %d more steps\n", len(t.Steps)-maxSteps)
				goto final
			}
			res := r.Result
			if r.Requeue != "" {
				res += " " + r.Requeue
			}
			fmt.Fprintf(&b, "%9s  #%d %s %s  => %s", r.T, r.Step, r.Controller, r.Request, res)
			if r.Error != "" {
				fmt.Fprintf(&b, " (%s)", clip(r.Error, 160))
			}
			b.WriteString("\n")
			for _, n := range r.Notes {
				fmt.Fprintf(&b, "%9s     * %s\n", "", n)
			}
			for _, o := range r.Ops {
				fmt.Fprintf(&b, "%9s     %s\n", o.T, opLine(o))
			}
			for _, e := range r.Events {
				fmt.Fprintf(&b, "%9s     event %s %s: %s\n", e.T, e.Type, e.Reason, clip(e.Message, 140))
			}
		}
	}
final:
	if f := t.Final; f != nil {
		fmt.Fprintf(&b, "%9s  end: %s after %d steps, %d requests pending, state %s\n", f.T, f.Stop, f.Steps, f.Pending, f.StateHash)
		for _, v := range f.Verdicts {
			verdict := "HOLDS"
			if v.Err != "" {
				verdict = "ERROR"
			} else if !v.Holds {
				verdict = "FAILS"
			}
			fmt.Fprintf(&b, "           oracle %s (%s): %s %s\n", v.Oracle, v.Type, verdict, clip(v.Evidence+v.Err, 300))
		}
	}
	return b.String()
}

// Mermaid renders a trace as a Mermaid sequence diagram: controllers and the
// API server as participants, stale reads and 409s marked.
func Mermaid(t *Trace, maxSteps int) string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	b.WriteString("    participant user\n")
	for _, c := range t.Header.Controllers {
		fmt.Fprintf(&b, "    participant %s\n", mid(c))
	}
	b.WriteString("    participant api as API server\n")
	shown := 0
	for _, line := range t.Lines {
		switch r := line.(type) {
		case Action:
			fmt.Fprintf(&b, "    user->>api: %s %s (t=%s)\n", r.Op, esc(r.Key), r.T)
		case Step:
			shown++
			if maxSteps > 0 && shown > maxSteps {
				fmt.Fprintf(&b, "    Note over api: ... %d more steps\n", len(t.Steps)-maxSteps)
				return b.String()
			}
			c := mid(r.Controller)
			fmt.Fprintf(&b, "    Note over %s: #%d t=%s reconcile %s\n", c, r.Step, r.T, esc(r.Request))
			for _, o := range r.Ops {
				if o.Cached {
					if o.Stale() {
						fmt.Fprintf(&b, "    Note right of %s: STALE cache read of %s: rv %s, server has %s\n", c, esc(shortKind(o.Kind)), o.Observed, o.Current)
					}
					continue
				}
				fmt.Fprintf(&b, "    %s->>api: %s\n", c, esc(opCall(o)))
				if o.Outcome != "ok" {
					fmt.Fprintf(&b, "    api--x%s: %s\n", c, esc(o.Outcome))
				} else if o.After != "" && o.After != o.Before {
					fmt.Fprintf(&b, "    api-->>%s: rv %s\n", c, o.After)
				}
			}
			res := r.Result
			if r.Requeue != "" {
				res += " " + r.Requeue
			}
			fmt.Fprintf(&b, "    Note over %s: => %s\n", c, esc(res))
		}
	}
	return b.String()
}

func opCall(o Op) string {
	s := strings.ToUpper(o.Verb)
	if o.Sub != "" {
		s += "/" + o.Sub
	}
	if o.PatchType != "" && o.Verb == "patch" {
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

func esc(s string) string { return strings.NewReplacer(";", ",", "#", "", "\n", " ").Replace(s) }

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

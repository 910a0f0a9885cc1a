package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ctrlbugs/corpus/engine/finding"
)

// outcome is what one finding did on one upstream version.
type outcome int

const (
	stillReproduces outcome = iota
	noLongerReproduces
	stillRefuted
	noLongerRefuted
	harnessBroken
	// notServed: go get needs a module version the registry refuses to
	// serve (403/404/410), so the harness could not be built and nothing
	// was judged. Not a broken harness, and not a tool failure either: the
	// registry answered, and will answer the same next time.
	notServed
	toolFailure // bump-check or `make bump` itself failed: not a result
)

var outcomeText = [...]string{
	stillReproduces:    "still reproduces",
	noLongerReproduces: "no longer reproduces (candidate fixed-upstream)",
	stillRefuted:       "still refuted",
	noLongerRefuted:    "no longer refuted",
	harnessBroken:      "harness broken",
	notServed:          "not checked (a dependency is not served by the registry)",
	toolFailure:        "TOOL FAILURE",
}

func (o outcome) String() string { return outcomeText[o] }

// result is one finding's outcome on one version, with the evidence that
// `make bump` gave for it (empty when the outcome is the expected one).
type result struct {
	finding string
	outcome outcome
	detail  string
}

// bumpOutcome maps the results of the per-finding lines that enginetest
// prints in bump mode (CTRLBUGS_MODE=bump: finding.Verdict's Bump line)
// onto outcomes. A finding's line that is neither a Bump nor a Broken line
// is a tool failure, so that a change of wording there cannot pass
// unnoticed here.
var bumpOutcome = map[finding.BumpResult]outcome{
	finding.StillReproduces:      stillReproduces,
	finding.NoLongerReproduces:   noLongerReproduces,
	finding.StillRefuted:         stillRefuted,
	finding.RefutedNowReproduces: noLongerRefuted,
	finding.BumpHarnessBroken:    harnessBroken,
}

// buildBroken is the line the Makefile's bump target prints when go get,
// tidy, build or vet fails: every finding of the project is then broken.
func buildBroken(project string) string { return project + ": harness broken at " }

// notAligned starts the line engine/cmd/bump-pin (run by the bump target)
// prints when the upstream module and its declared siblings cannot be
// moved to the versions the new release requires; it names each module and
// its versions. The bump target then exits without its harness-broken line.
func notAligned(project string) string { return project + ": modules not aligned at " }

// classify turns the output of `make bump` (stdout and stderr) and its exit
// status into one result per finding of the project, in the order given.
// A finding without a line, when the build went through, is harness broken:
// the test binary failed or crashed before judging it.
func classify(project string, findings []string, output string, exitErr error) ([]result, error) {
	lines := strings.Split(output, "\n")
	if exitErr != nil {
		o, detail := harnessBroken, ""
		if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, notAligned(project)) }); i >= 0 {
			detail = "modules not aligned at " + strings.TrimPrefix(lines[i], notAligned(project))
		} else if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, buildBroken(project)) }) {
			detail = "dependency resolution, build or vet failed: " + firstError(lines)
		} else {
			return nil, fmt.Errorf("make bump failed without reporting a broken harness: %v", exitErr)
		}
		if mods := unserved(lines); mods != nil {
			if len(mods) > 3 {
				mods = append(mods[:3], fmt.Sprintf("and %d more (see the log)", len(mods)-3))
			}
			o, detail = notServed, strings.Join(mods, ", ")
		} else if l := unreachable(lines); l != "" {
			return nil, fmt.Errorf("the module registry could not be reached: %s", l)
		}
		out := make([]result, len(findings))
		for i, id := range findings {
			out[i] = result{id, o, detail}
		}
		return out, nil
	}
	known := map[string]bool{}
	for _, id := range findings {
		known[id] = true
	}
	seen := map[string]result{}
	for _, l := range lines {
		id, _, isFinding := finding.LineID(l)
		if !isFinding || !known[id] {
			continue
		}
		if _, dup := seen[id]; dup {
			return nil, fmt.Errorf("make bump printed two lines for %s (the second: %q)", id, l)
		}
		r, ok := parseFindingLine(l)
		if !ok {
			return nil, fmt.Errorf("make bump printed %q: not a bump verdict this command knows (enginetest's wording changed?)", l)
		}
		seen[id] = r
	}
	out := make([]result, len(findings))
	for i, id := range findings {
		r, ok := seen[id]
		if !ok {
			r = result{id, harnessBroken, "no verdict line: the test binary failed or crashed before judging it: " + firstError(lines)}
		}
		out[i] = r
	}
	return out, nil
}

// parseFindingLine reads a finding's Bump or Broken line. The detail is
// the evidence of a changed result, after what the run covered (its
// scope: "variants=1/3: …"); the expected result needs none.
func parseFindingLine(line string) (result, bool) {
	v, err := finding.Parse(line)
	switch {
	case err != nil:
		return result{}, false
	case v.Line == finding.Broken:
		return result{v.ID, harnessBroken, v.Detail}, true
	case v.Line != finding.Bump:
		return result{}, false
	}
	o := bumpOutcome[v.Bump]
	detail := v.Detail
	switch {
	case o == stillReproduces || o == stillRefuted:
		detail = ""
	case v.Scope() != "" && o != harnessBroken:
		detail = v.Scope() + ": " + detail
	}
	return result{v.ID, o, detail}, true
}

// refused is a go command download error the registry gave for one module
// version: it exists in the listing, or is required, but is not served.
var refused = regexp.MustCompile(`(\S+@v[^\s:]+): reading \S+: (403 Forbidden|404 Not Found|410 Gone)`)

// unserved lists the module versions the registry refused, each once, in
// order of appearance, with the status it gave.
func unserved(lines []string) []string {
	var out []string
	for _, l := range lines {
		if m := refused.FindStringSubmatch(l); m != nil {
			if s := m[1] + " (" + m[2] + ")"; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// netFailure are go command errors that mean the registry was not reached:
// a tool (or network) failure, which says nothing about the upstream.
var netFailure = regexp.MustCompile(`dial tcp|i/o timeout|connection refused|connection reset|no such host|TLS handshake timeout|50[234] [A-Z]`)

func unreachable(lines []string) string {
	for _, l := range lines {
		if netFailure.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// goProgress are go command lines that tell progress, not failure.
var goProgress = regexp.MustCompile(`^go: (downloading|upgraded|downgraded|added|removed|finding|extracting|switching) `)

// compileError is a compiler or vet position: file.go:line[:col]: message.
var compileError = regexp.MustCompile(`\.go:\d+(:\d+)?: `)

// firstError picks the line of a failed bump that best says why: the first
// compiler or vet error, else the first go command error, else a pointer
// to the log.
func firstError(lines []string) string {
	for _, l := range lines {
		if compileError.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "go: ") && !goProgress.MatchString(l) && !strings.Contains(l, "; switching to go") {
			// "go: X imports" continues on tab-indented lines.
			msg := strings.TrimSpace(l)
			for _, c := range lines[i+1:] {
				if !strings.HasPrefix(c, "\t") {
					break
				}
				msg += " " + strings.TrimSpace(c)
			}
			return msg
		}
	}
	return "no error line found"
}

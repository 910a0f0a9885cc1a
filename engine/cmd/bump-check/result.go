package main

import (
	"fmt"
	"regexp"
	"strings"
)

// outcome is what one finding did on one upstream version.
type outcome int

const (
	stillReproduces outcome = iota
	noLongerReproduces
	stillRefuted
	noLongerRefuted
	harnessBroken
	toolFailure // bump-check or `make bump` itself failed: not a result
)

var outcomeText = [...]string{
	stillReproduces:    "still reproduces",
	noLongerReproduces: "no longer reproduces (candidate fixed-upstream)",
	stillRefuted:       "still refuted",
	noLongerRefuted:    "no longer refuted",
	harnessBroken:      "harness broken",
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

// bumpLine maps the per-finding lines that enginetest prints in bump mode
// (CTRLBUGS_MODE=bump, see enginetest.Findings) onto outcomes. The prefixes
// are enginetest's own wording; a line that matches none of them is a tool
// failure, so that a change of wording there cannot pass unnoticed here.
var bumpLine = []struct {
	prefix  string
	outcome outcome
}{
	{"still reproduces", stillReproduces},
	{"no longer reproduces (candidate fixed-upstream)", noLongerReproduces},
	{"still refuted", stillRefuted},
	{"the refuted claim now reproduces", noLongerRefuted},
	{"harness broken", harnessBroken},
	{"HARNESS-BROKEN", harnessBroken},
}

// buildBroken is the line the Makefile's bump target prints when go get,
// tidy, build or vet fails: every finding of the project is then broken.
func buildBroken(project string) string { return project + ": harness broken at " }

// findingLine matches the Makefile's own filter for finding lines.
var findingLine = regexp.MustCompile(`^([a-z0-9]+-[a-z0-9]+): (.*)$`)

// classify turns the output of `make bump` (stdout and stderr) and its exit
// status into one result per finding of the project, in the order given.
// A finding without a line, when the build went through, is harness broken:
// the test binary failed or crashed before judging it.
func classify(project string, findings []string, output string, exitErr error) ([]result, error) {
	lines := strings.Split(output, "\n")
	if exitErr != nil {
		for _, l := range lines {
			if strings.HasPrefix(l, buildBroken(project)) {
				detail := "dependency resolution, build or vet failed: " + firstError(lines)
				out := make([]result, len(findings))
				for i, id := range findings {
					out[i] = result{id, harnessBroken, detail}
				}
				return out, nil
			}
		}
		return nil, fmt.Errorf("make bump failed without reporting a broken harness: %v", exitErr)
	}
	known := map[string]bool{}
	for _, id := range findings {
		known[id] = true
	}
	seen := map[string]result{}
	for _, l := range lines {
		m := findingLine.FindStringSubmatch(l)
		if m == nil || !known[m[1]] {
			continue
		}
		id, text := m[1], m[2]
		if _, dup := seen[id]; dup {
			return nil, fmt.Errorf("make bump printed two lines for %s (the second: %q)", id, l)
		}
		r, ok := parseFindingLine(id, text)
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

// parseFindingLine reads "<status>[ (note)][: evidence]" after the id.
func parseFindingLine(id, text string) (result, bool) {
	for _, b := range bumpLine {
		rest, ok := strings.CutPrefix(text, b.prefix)
		if !ok {
			continue
		}
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, ":"), " ")
		if b.outcome == stillRefuted || b.outcome == stillReproduces {
			rest = "" // the expected verdict needs no evidence
		}
		return result{id, b.outcome, rest}, true
	}
	return result{}, false
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
	for _, l := range lines {
		if strings.HasPrefix(l, "go: ") && !goProgress.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return "no error line found"
}

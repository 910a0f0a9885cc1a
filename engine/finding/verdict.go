package finding

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Verdict is the one line a finding's check prints about it (enginetest's
// TestFindings in each CTRLBUGS_MODE), as a value: the printers build one
// and print its String, the readers (the Makefile's reproduce and verify
// targets grep the same text; engine/cmd/release-verify and
// engine/cmd/bump-check) Parse it back. The printed text is the interface:
// the Makefile greps it, and a finding is verified by it.
//
// It is named Verdict, not Outcome, because engine.Outcome is already the
// outcome of a scenario's run (its runs and their oracle verdicts), which a
// finding check consumes; this is what the check concludes from it about a
// finding's claim, and the Makefile and the tools have always called these
// lines verdict lines.
//
// The lines, one per Line value ([...] optional; <id> is the finding's id,
// or "<id>@<release>" with Release set):
//
//	Broken     <id>: HARNESS-BROKEN <detail>
//	Recorded   <id>: recorded <file> (<n> bytes) trace=<hash>
//	Reproduce  <id>: <claim> as recorded trace=<hash>[ variants=<ok>/<n>][ upstream=<modules>]
//	           <id>: MISMATCH with the recorded <claim>: <mismatch>
//	Verify     <id> <claim>[ variants=<ok>/<n>] control=<control>[ also=<label>:[digest:]<result>,…] trace=<hash>[ upstream=<modules>]
//	           <id> MISMATCH(<mismatch>)[ variants=<ok>/<n>] control=… trace=<hash>[ upstream=<modules>]
//	Bump       <id>: <bump result>[ <scope>][: <detail>]
//
// Parse(v.String()) == v for every Verdict whose fields the line shows (a
// verify line with a mismatch does not name the claim, so Claim is empty
// there), as long as free text does not contain the separator that
// follows it: a mismatch or control without " control=", an also result
// without "," followed by "<label>:".
type Verdict struct {
	// ID is the finding's id; Release, when set, the other upstream
	// release it was checked on (engine/cmd/release-verify).
	ID, Release string
	Line        Line
	// Claim is the word for the finding's claim: REPRODUCED or REFUTED
	// (ClaimOf), or "" for a status that claims neither (harness-broken).
	Claim string
	// Mismatch, for Reproduce and Verify, says how the replay disagreed
	// with the recording; "" when it agreed.
	Mismatch string
	// Detail is what a Broken line or a Bump line's result rests on: the
	// load or build error, the problem that flipped the result.
	Detail string
	// Trace is the hash of the replayed or recorded trace ("sha256:…").
	Trace string
	// File and Bytes are a Recorded line's trace file and size.
	File  string
	Bytes int
	// Variants counts the variants of a claim about every variant that
	// agreed with it.
	Variants *Count
	// Control is a Verify line's control run: ControlClean or its problem,
	// as printed (spaces as underscores, except a harness error's).
	Control string
	// Also are a Verify line's runs under other conditions.
	Also []Also
	// Bump is a Bump line's result.
	Bump BumpResult
	// Runs, on a Bump line, is the scope of a holds claim checked on one
	// search: "(oracle holds in all <n> runs)".
	Runs *int
	// Upstream, on a Reproduce (not a mismatch) or Verify line, names the
	// upstream module versions the check ran, as explore's run lines do:
	// "<module without host>@<version>", comma separated, in path order
	// (enginetest.UpstreamField). Empty: not printed.
	Upstream string
}

// Line says which line a Verdict is: which mode printed it.
type Line int

// The lines, one per mode of TestFindings (and Broken, any mode's).
const (
	// Broken: the finding could not be checked (its write-up, scenario or
	// recorded trace did not load).
	Broken Line = iota + 1
	// Recorded: record mode wrote the trace.
	Recorded
	// Reproduce: reproduce mode replayed the trace.
	Reproduce
	// Verify: verify mode replayed the trace and ran the control and the
	// also runs.
	Verify
	// Bump: bump mode ran the finding afresh on the upstream pinned now.
	Bump
)

// Count is k of n.
type Count struct{ OK, N int }

// String renders "k/n".
func (c Count) String() string { return fmt.Sprintf("%d/%d", c.OK, c.N) }

// Also is one run under other conditions (Finding.Also) on a Verify line.
type Also struct {
	Label string
	// Digest says the run was judged from the committed digest of its
	// scenario's search (engine/enginetest.AlsoDigest) rather than run:
	// printed as a "digest:" prefix of the result.
	Digest bool
	// Problem is why the run did not give its expected verdict, as printed
	// (spaces as underscores); "" when it did ("ok").
	Problem string
}

// BumpResult is what a bump found for the finding's claim.
type BumpResult int

// The bump results; their text is what the Bump line prints.
const (
	StillReproduces BumpResult = iota + 1
	StillRefuted
	NoLongerReproduces
	RefutedNowReproduces
	BumpHarnessBroken
)

var bumpText = map[BumpResult]string{
	StillReproduces:      "still reproduces",
	StillRefuted:         "still refuted",
	NoLongerReproduces:   "no longer reproduces (candidate fixed-upstream)",
	RefutedNowReproduces: "the refuted claim now reproduces",
	BumpHarnessBroken:    "harness broken",
}

// String is the result's wording on a Bump line.
func (b BumpResult) String() string { return bumpText[b] }

// BumpResultOf is the result of a bump that checked a claim expecting
// the oracle to fail (a reproducer) or hold, with problem the reason the
// run did not give that verdict ("" when it did).
func BumpResultOf(expectFails bool, problem string) BumpResult {
	switch {
	case problem == "" && expectFails:
		return StillReproduces
	case problem == "":
		return StillRefuted
	case expectFails:
		return NoLongerReproduces
	default:
		return RefutedNowReproduces
	}
}

// The claim words of reproduce and verify lines.
const (
	ClaimReproduced = "REPRODUCED"
	ClaimRefuted    = "REFUTED"
	ClaimByDesign   = "BY-DESIGN"
)

// ClaimOf is the claim word for a finding's status: "" for a status that
// claims neither.
func ClaimOf(status string) string {
	return map[string]string{Reproduces: ClaimReproduced, FixedUpstream: ClaimReproduced, Refuted: ClaimRefuted, ByDesign: ClaimByDesign}[status]
}

// ControlClean is a Verify line's control when the control run gave the
// oracle the opposite answer, as claimed.
const ControlClean = "clean"

// Underscored is problem as a Verify line prints it inside a field: spaces
// as underscores, so that the line stays space-separated.
func Underscored(problem string) string { return strings.ReplaceAll(problem, " ", "_") }

// OK reports whether the line says the finding checked out: its replay
// agreed, its control was clean, every also run gave its verdict, the
// bump left the claim standing; a Broken line never does.
func (v Verdict) OK() bool {
	switch v.Line {
	case Recorded:
		return true
	case Reproduce:
		return v.Mismatch == ""
	case Verify:
		for _, a := range v.Also {
			if a.Problem != "" {
				return false
			}
		}
		return v.Mismatch == "" && v.Control == ControlClean
	case Bump:
		return v.Bump == StillReproduces || v.Bump == StillRefuted
	}
	return false
}

// Scope is a Bump line's scope: "variants=k/n", "(oracle holds in all n
// runs)", or "".
func (v Verdict) Scope() string {
	switch {
	case v.Variants != nil:
		return "variants=" + v.Variants.String()
	case v.Runs != nil:
		return fmt.Sprintf("(oracle holds in all %d runs)", *v.Runs)
	}
	return ""
}

// String renders the line, without its newline.
func (v Verdict) String() string {
	id := v.ID
	if v.Release != "" {
		id += "@" + v.Release
	}
	variants := ""
	if v.Variants != nil {
		variants = " variants=" + v.Variants.String()
	}
	switch v.Line {
	case Broken:
		return id + ": HARNESS-BROKEN " + v.Detail
	case Recorded:
		return fmt.Sprintf("%s: recorded %s (%d bytes) trace=%s", id, v.File, v.Bytes, v.Trace)
	case Reproduce:
		if v.Mismatch != "" {
			return fmt.Sprintf("%s: MISMATCH with the recorded %s: %s", id, v.Claim, v.Mismatch)
		}
		return fmt.Sprintf("%s: %s as recorded trace=%s%s%s", id, v.Claim, v.Trace, variants, v.upstream())
	case Verify:
		observed := v.Claim
		if v.Mismatch != "" {
			observed = "MISMATCH(" + v.Mismatch + ")"
		}
		also := ""
		if len(v.Also) > 0 {
			parts := make([]string, len(v.Also))
			for i, a := range v.Also {
				parts[i] = a.Label + ":" + a.result()
			}
			also = " also=" + strings.Join(parts, ",")
		}
		return fmt.Sprintf("%s %s%s control=%s%s trace=%s%s", id, observed, variants, v.Control, also, v.Trace, v.upstream())
	case Bump:
		s := id + ": " + v.Bump.String()
		if v.Bump != BumpHarnessBroken {
			if scope := v.Scope(); scope != "" {
				s += " " + scope
			}
		}
		if v.Detail != "" {
			s += ": " + v.Detail
		}
		return s
	}
	return fmt.Sprintf("%s: unknown verdict line %d", id, v.Line)
}

// upstream is the line's upstream field with its leading space, or "".
func (v Verdict) upstream() string {
	if v.Upstream == "" {
		return ""
	}
	return " upstream=" + v.Upstream
}

func (a Also) result() string {
	r := a.Problem
	if r == "" {
		r = "ok"
	}
	if a.Digest {
		r = alsoDigestPrefix + r
	}
	return r
}

// alsoDigestPrefix marks an also result judged from the committed digest.
const alsoDigestPrefix = "digest:"

// idPattern is a finding id, optionally with a release: the same shape the
// Makefile's greps look for ([a-z0-9]+-[a-z0-9]+).
const idPattern = `([a-z0-9]+-[a-z0-9]+)(?:@(v[0-9A-Za-z.+-]+))?`

var (
	lineID = regexp.MustCompile(`^` + idPattern + `(:? )`)

	recordedLine  = regexp.MustCompile(`^recorded (.*) \((\d+) bytes\) trace=(\S+)$`)
	reproducedRe  = regexp.MustCompile(`^([A-Z-]*) as recorded trace=(\S+?)(?: variants=(\d+)/(\d+))?(?: upstream=(\S+))?$`)
	mismatchRe    = regexp.MustCompile(`^MISMATCH with the recorded ([A-Z-]*): (.*)$`)
	verifyRe      = regexp.MustCompile(`^(MISMATCH\((.*?)\)|[A-Z-]*)(?: variants=(\d+)/(\d+))? control=(.*?)(?: also=(\S+))? trace=(\S+?)(?: upstream=(\S+))?$`)
	variantsScope = regexp.MustCompile(`^ variants=(\d+)/(\d+)`)
	runsScope     = regexp.MustCompile(`^ \(oracle holds in all (\d+) runs\)`)
	alsoSplit     = regexp.MustCompile(`,([A-Za-z0-9][A-Za-z0-9.-]*):`)
)

// LineID returns the id (and release) a line starts with, as a verdict
// line would; ok is false if it does not start like one. A reader can tell
// a finding's line it cannot Parse (a wording it does not know) from
// other output with it.
func LineID(line string) (id, release string, ok bool) {
	m := lineID.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Parse reads a line String printed. The error says why a line is not one.
func Parse(line string) (Verdict, error) {
	m := lineID.FindStringSubmatch(line)
	if m == nil {
		return Verdict{}, fmt.Errorf("%q: not a finding's verdict line (no \"<id>: \" or \"<id> \")", line)
	}
	v := Verdict{ID: m[1], Release: m[2]}
	rest := line[len(m[0]):]
	bad := func(what string) (Verdict, error) {
		return Verdict{}, fmt.Errorf("%q: not a %s line", line, what)
	}
	if m[3] == " " {
		// Only verify's line has no colon after the id.
		vm := verifyRe.FindStringSubmatch(rest)
		if vm == nil {
			return bad("verify")
		}
		v.Line = Verify
		if strings.HasPrefix(vm[1], "MISMATCH(") {
			v.Mismatch = vm[2]
		} else {
			v.Claim = vm[1]
		}
		v.Variants = count(vm[3], vm[4])
		v.Control, v.Trace, v.Upstream = vm[5], vm[7], vm[8]
		if vm[6] != "" {
			v.Also = parseAlso(vm[6])
		}
		return v, nil
	}
	switch {
	case strings.HasPrefix(rest, "HARNESS-BROKEN "):
		v.Line, v.Detail = Broken, strings.TrimPrefix(rest, "HARNESS-BROKEN ")
		return v, nil
	case strings.HasPrefix(rest, "recorded "):
		rm := recordedLine.FindStringSubmatch(rest)
		if rm == nil {
			return bad("record")
		}
		n, err := strconv.Atoi(rm[2])
		if err != nil {
			return bad("record")
		}
		v.Line, v.File, v.Bytes, v.Trace = Recorded, rm[1], n, rm[3]
		return v, nil
	case strings.HasPrefix(rest, "MISMATCH with the recorded "):
		mm := mismatchRe.FindStringSubmatch(rest)
		if mm == nil {
			return bad("reproduce")
		}
		v.Line, v.Claim, v.Mismatch = Reproduce, mm[1], mm[2]
		return v, nil
	}
	if rm := reproducedRe.FindStringSubmatch(rest); rm != nil {
		v.Line, v.Claim, v.Trace, v.Variants, v.Upstream = Reproduce, rm[1], rm[2], count(rm[3], rm[4]), rm[5]
		return v, nil
	}
	// Bump: the result's wording, then the scope and the detail.
	for b := StillReproduces; b <= BumpHarnessBroken; b++ {
		after, found := strings.CutPrefix(rest, b.String())
		if !found || (after != "" && after[0] != ' ' && after[0] != ':') {
			continue
		}
		v.Line, v.Bump = Bump, b
		if b != BumpHarnessBroken {
			if sm := variantsScope.FindStringSubmatch(after); sm != nil {
				v.Variants, after = count(sm[1], sm[2]), after[len(sm[0]):]
			} else if sm := runsScope.FindStringSubmatch(after); sm != nil {
				n, _ := strconv.Atoi(sm[1])
				v.Runs, after = &n, after[len(sm[0]):]
			}
		}
		switch detail, found := strings.CutPrefix(after, ": "); {
		case found && detail != "":
			v.Detail = detail
		case after != "":
			return bad("bump")
		}
		return v, nil
	}
	return Verdict{}, fmt.Errorf("%q: a finding's line this version does not know", line)
}

func count(ok, n string) *Count {
	if n == "" {
		return nil
	}
	k, _ := strconv.Atoi(ok)
	m, _ := strconv.Atoi(n)
	return &Count{OK: k, N: m}
}

// parseAlso reads "label:result,label:result": a result is "ok" or a
// problem, which may itself contain commas but not ",<label>:".
func parseAlso(s string) []Also {
	var out []Also
	cuts := alsoSplit.FindAllStringIndex(s, -1)
	start := 0
	for _, c := range append(cuts, []int{len(s), len(s)}) {
		part := s[start:c[0]]
		label, result, _ := strings.Cut(part, ":")
		result, fromDigest := strings.CutPrefix(result, alsoDigestPrefix)
		if result == "ok" {
			result = ""
		}
		out = append(out, Also{Label: label, Digest: fromDigest, Problem: result})
		start = c[0] + 1
	}
	return out
}

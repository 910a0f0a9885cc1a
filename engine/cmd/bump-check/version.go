package main

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// version is a module version the registry lists, checked by
// golang.org/x/mod/semver (Go's semver: a leading "v"; build metadata such
// as "+incompatible" takes no part in ordering; pseudo-versions are
// pre-releases).
type version struct{ raw string }

// parseVersion accepts vMAJOR.MINOR.PATCH[-PRE][+BUILD]: a valid semantic
// version in full (semver also accepts "v1" and "v1.2" as shorthands,
// which no module version is).
func parseVersion(s string) (version, error) {
	v := version{raw: s}
	if !strings.HasPrefix(s, "v") {
		return v, fmt.Errorf("version %q: does not start with \"v\"", s)
	}
	if !semver.IsValid(s) {
		return v, fmt.Errorf("version %q: not a semantic version (want vMAJOR.MINOR.PATCH, numbers without leading zeros)", s)
	}
	if core, _, _ := strings.Cut(strings.TrimSuffix(s, semver.Build(s)), "-"); strings.Count(core, ".") != 2 {
		return v, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH", s)
	}
	return v, nil
}

// isPrerelease reports whether v has a pre-release part (this includes
// pseudo-versions).
func (v version) isPrerelease() bool { return semver.Prerelease(v.raw) != "" }

// compare orders versions by semver precedence: -1, 0 or +1.
func compare(a, b version) int { return semver.Compare(a.raw, b.raw) }

// newerReleases picks, from the versions the registry lists, those newer
// than the pinned one: pre-releases only when pre is set, the newest max of
// them (all when max <= 0), oldest first. A listed version that does not
// parse is an error: the registry's answer is not what we think it is.
func newerReleases(listed []string, pinned string, pre bool, max int) ([]string, error) {
	pv, err := parseVersion(pinned)
	if err != nil {
		return nil, fmt.Errorf("pinned %w", err)
	}
	var newer []version
	for _, s := range listed {
		v, err := parseVersion(s)
		if err != nil {
			return nil, fmt.Errorf("listed %w", err)
		}
		if compare(v, pv) <= 0 || (v.isPrerelease() && !pre) {
			continue
		}
		newer = append(newer, v)
	}
	slices.SortFunc(newer, compare)
	newer = slices.CompactFunc(newer, func(a, b version) bool { return compare(a, b) == 0 })
	if max > 0 && len(newer) > max {
		newer = newer[len(newer)-max:]
	}
	out := make([]string, len(newer))
	for i, v := range newer {
		out[i] = v.raw
	}
	return out, nil
}

// explicitVersions splits VERSIONS (commas or spaces) and checks each.
func explicitVersions(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for _, f := range fields {
		if _, err := parseVersion(f); err != nil {
			return nil, fmt.Errorf("VERSIONS: %w", err)
		}
	}
	return fields, nil
}

// probeCandidates are the versions bump-check asks the registry for, one
// by one, when it lists none for a module (some registries serve exact
// versions without a list): the next four patches of the pinned minor
// release and the first four patches of the next two minors, oldest
// first. Pre-releases and majors are not guessed.
func probeCandidates(pinned string) ([]string, error) {
	pv, err := parseVersion(pinned)
	if err != nil {
		return nil, fmt.Errorf("pinned %w", err)
	}
	var major, minor, patch int
	full, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(pv.raw, "v"), semver.Build(pv.raw)), "-")
	if _, err := fmt.Sscanf(full, "%d.%d.%d", &major, &minor, &patch); err != nil {
		return nil, fmt.Errorf("pinned %s: %v", pinned, err)
	}
	var out []string
	for p := patch + 1; p <= patch+4; p++ {
		out = append(out, fmt.Sprintf("v%d.%d.%d", major, minor, p))
	}
	for m := minor + 1; m <= minor+2; m++ {
		for p := 0; p < 4; p++ {
			out = append(out, fmt.Sprintf("v%d.%d.%d", major, m, p))
		}
	}
	return out, nil
}

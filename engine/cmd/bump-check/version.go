package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// version is a parsed module version (semver 2.0 with Go's leading "v").
// The engine module carries no golang.org/x/mod, and the few rules needed
// to order a module's releases fit here.
type version struct {
	raw                 string
	major, minor, patch uint64
	pre                 []string // dot-separated pre-release identifiers; nil for a release
}

// parseVersion accepts vMAJOR.MINOR.PATCH[-PRE][+BUILD] (so also Go's
// "+incompatible" and pseudo-versions); anything else is an error.
func parseVersion(s string) (version, error) {
	v := version{raw: s}
	rest, ok := strings.CutPrefix(s, "v")
	if !ok {
		return v, fmt.Errorf("version %q: does not start with \"v\"", s)
	}
	rest, _, _ = strings.Cut(rest, "+") // build metadata takes no part in ordering
	core, pre, hasPre := strings.Cut(rest, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH", s)
	}
	nums := []*uint64{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		if !isNumeric(p) || (len(p) > 1 && p[0] == '0') {
			return v, fmt.Errorf("version %q: %q is not a number without leading zeros", s, p)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, fmt.Errorf("version %q: %v", s, err)
		}
		*nums[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" {
				return v, fmt.Errorf("version %q: empty pre-release identifier", s)
			}
		}
	}
	return v, nil
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPrerelease reports whether v has a pre-release part (this includes
// pseudo-versions).
func (v version) isPrerelease() bool { return v.pre != nil }

// compare orders versions by semver precedence: -1, 0 or +1.
func compare(a, b version) int {
	if c := cmpUint(a.major, b.major); c != 0 {
		return c
	}
	if c := cmpUint(a.minor, b.minor); c != 0 {
		return c
	}
	if c := cmpUint(a.patch, b.patch); c != 0 {
		return c
	}
	switch {
	case a.pre == nil && b.pre == nil:
		return 0
	case a.pre == nil: // a release ranks above its pre-releases
		return 1
	case b.pre == nil:
		return -1
	}
	for i := range min(len(a.pre), len(b.pre)) {
		if c := comparePreID(a.pre[i], b.pre[i]); c != 0 {
			return c
		}
	}
	return cmpUint(uint64(len(a.pre)), uint64(len(b.pre)))
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// comparePreID: numeric identifiers compare as numbers and rank below
// alphanumeric ones, which compare as strings.
func comparePreID(a, b string) int {
	an, bn := isNumeric(a), isNumeric(b)
	switch {
	case an && bn:
		if len(a) != len(b) {
			return cmpUint(uint64(len(a)), uint64(len(b)))
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

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

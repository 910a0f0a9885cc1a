// Package serverversion answers which of the API server's behaviours the
// engine models depend on the simulated kube-apiserver release, from
// kube-apiserver's own versioned feature gates (k8s.io/apiserver's
// pkg/features, evaluated at an emulation version) rather than a table of
// our own.
//
// Today one behaviour depends on it: how an informer's first list is
// served. client-go's reflector asks for a watch-list (a watch with
// sendInitialEvents, resourceVersionMatch=NotOlderThan: a consistent
// snapshot, which the watch cache serves only once it has caught up with
// etcd, the client retrying until then) when its WatchListClient gate is
// on, and falls back to a LIST at resourceVersion=0 when the server
// refuses it; that LIST is served from the watch cache as it is, however
// far it lags. Whether the server accepts the watch-list is its WatchList
// gate: alpha and off from 1.27, on by default in 1.32, off again in 1.33,
// on from 1.34 (k8s.io/apiserver pkg/features/kube_features.go).
package serverversion

import (
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
)

// Oldest and Newest bound the releases a scenario may name: WatchList's
// gate exists from 1.27, and the linked k8s.io/apiserver (v0.36) knows
// releases up to its own.
var (
	Oldest = version.MajorMinor(1, 27)
	Newest = version.MajorMinor(1, 36)
)

var form = regexp.MustCompile(`^1\.([0-9]+)$`)

// Parse checks a release as scenarios write it ("1.34") and returns it.
func Parse(s string) (*version.Version, error) {
	m := form.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("%q: a kube-apiserver release is written major.minor, e.g. \"1.34\"", s)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	v := version.MajorMinor(1, uint(minor))
	if v.LessThan(Oldest) || v.GreaterThan(Newest) {
		return nil, fmt.Errorf("%q: the engine models kube-apiserver %s to %s (WatchList's gate exists from 1.27; the linked k8s.io/apiserver is %s)",
			s, Oldest, Newest, Newest)
	}
	return v, nil
}

// WatchList reports whether kube-apiserver release v serves watch-list
// requests by default: its WatchList feature gate's default at that
// emulation version.
func WatchList(v *version.Version) (bool, error) {
	g := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := g.SetEmulationVersion(v); err != nil {
		return false, fmt.Errorf("kube-apiserver %s: %w", v, err)
	}
	return g.Enabled(features.WatchList), nil
}

// ClientWatchList reports whether the linked client-go asks for a
// watch-list first (its WatchListClient gate: beta, on by default from
// client-go 1.35).
func ClientWatchList() bool {
	return clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
}

// FirstList is how an informer started at some instant gets its first
// state from a server of a given release.
type FirstList struct {
	// Release is the kube-apiserver release ("1.34").
	Release string
	// Consistent: the first state is a consistent snapshot no older than
	// the informer's start (watch-list on both sides); otherwise it is a
	// LIST at resourceVersion=0 from the watch cache, as stale as the
	// cache is.
	Consistent bool
}

// Describe says how the first list is served and why.
func (f FirstList) Describe() string {
	if f.Consistent {
		return fmt.Sprintf("kube-apiserver %s serves watch-list (WatchList on): an informer's first list is a consistent snapshot", f.Release)
	}
	why := "WatchList off"
	if !ClientWatchList() {
		why = "the client's WatchListClient off"
	}
	return fmt.Sprintf("kube-apiserver %s: %s, so an informer's first list is a LIST at resourceVersion=0 from the watch cache, as stale as it is", f.Release, why)
}

// For returns how release s serves an informer's first list.
func For(s string) (FirstList, error) {
	v, err := Parse(s)
	if err != nil {
		return FirstList{}, err
	}
	on, err := WatchList(v)
	if err != nil {
		return FirstList{}, err
	}
	return FirstList{Release: s, Consistent: on && ClientWatchList()}, nil
}

package karpenter

import (
	"reflect"
	"strings"
	"sync"

	gocache "github.com/patrickmn/go-cache"
)

// Karpenter's constructors make go-cache caches (events/recorder.go:61,
// pretty.NewChangeMonitor, the lifecycle, disruption and consistency
// controllers). go-cache starts a janitor goroutine for each and sets a
// finalizer on the cache that stops it by sending on a channel
// (patrickmn/go-cache cache.go:1085-1131). Made inside a run's synctest
// bubble, that channel belongs to the bubble, and the finalizer runs on
// the runtime's finalizer goroutine, outside it: once a run's cache is
// collected, the send is a fatal error ("send on synctest channel from
// outside bubble") that kills the test binary. A real process never
// collects these caches (its controllers live as long as it does).
//
// So every cache a Setup built is kept reachable for the life of the test
// binary, as the janitor goroutines themselves are (Project.Immortal):
// pinCaches walks what Setup built and holds each *gocache.Cache. Only
// Karpenter's and operatorpkg's own types are walked (the engine's and
// client libraries' are not), which is where the constructors keep them.

var (
	pinnedMu sync.Mutex
	pinned   []*gocache.Cache
)

var goCacheType = reflect.TypeFor[gocache.Cache]()

// pinCaches keeps every go-cache cache reachable from roots, through
// Karpenter's and operatorpkg's types, and returns how many it found.
func pinCaches(roots ...any) int {
	seen := map[uintptr]bool{}
	var found []*gocache.Cache
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Type().Elem() == goCacheType {
				found = append(found, (*gocache.Cache)(v.UnsafePointer()))
				return
			}
			if ours(v.Type().Elem()) {
				walk(v.Elem())
			}
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.Type().Name() != "" && !ours(v.Type()) {
				return
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if v.Kind() == reflect.Slice && v.IsNil() {
				return
			}
			if !ours(v.Type().Elem()) && v.Type().Elem().Kind() != reflect.Interface {
				return
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	for _, r := range roots {
		walk(reflect.ValueOf(r))
	}
	pinnedMu.Lock()
	pinned = append(pinned, found...)
	pinnedMu.Unlock()
	return len(found)
}

// ours reports whether t (or what it points to) is a type of Karpenter's
// or operatorpkg's, or go-cache's Cache: the types walked.
func ours(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == goCacheType {
		return true
	}
	p := t.PkgPath()
	return strings.HasPrefix(p, "sigs.k8s.io/karpenter/") || strings.HasPrefix(p, "github.com/awslabs/operatorpkg/")
}

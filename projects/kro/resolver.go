package kro

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ttlResolver stands in for upstream's TTLCachedSchemaResolver
// (pkg/graph/schema/resolver/ttl_cached.go at v0.9.4), with the same
// parameters (500 entries, 5 minutes) and the same answers: a GVK resolved
// less than ttl ago is served from the cache, otherwise from the delegate,
// and errors are not cached. What differs is how entries expire: upstream's
// golang-lru expirable cache drops them from a goroutine of its own that
// can never be stopped (golang-lru v2.0.7 expirable_lru.go:79-93), which a
// run's bubble cannot end with; here an entry is checked on lookup, which
// is when expiry is observable anyway (the expirable LRU's Get also
// refuses an expired entry). Upstream's singleflight de-duplication and
// metrics are left out: one worker resolves at a time here.
type ttlResolver struct {
	delegate resolver.SchemaResolver
	max      int
	ttl      time.Duration

	mu      sync.Mutex
	entries map[schema.GroupVersionKind]ttlEntry
	order   []schema.GroupVersionKind // least recently added first
}

type ttlEntry struct {
	s       *spec.Schema
	expires time.Time
}

func newTTLResolver(delegate resolver.SchemaResolver, max int, ttl time.Duration) *ttlResolver {
	return &ttlResolver{delegate: delegate, max: max, ttl: ttl, entries: map[schema.GroupVersionKind]ttlEntry{}}
}

// ResolveSchema implements resolver.SchemaResolver.
func (r *ttlResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	r.mu.Lock()
	if e, ok := r.entries[gvk]; ok && time.Now().Before(e.expires) {
		r.mu.Unlock()
		return e.s, nil
	}
	r.mu.Unlock()
	s, err := r.delegate.ResolveSchema(gvk)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[gvk]; !ok {
		r.order = append(r.order, gvk)
	}
	r.entries[gvk] = ttlEntry{s: s, expires: time.Now().Add(r.ttl)}
	for len(r.order) > r.max {
		delete(r.entries, r.order[0])
		r.order = r.order[1:]
	}
	return s, nil
}

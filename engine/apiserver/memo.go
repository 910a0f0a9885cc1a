package apiserver

import "sync"

// processMemo holds values built in this process (a test binary runs many
// servers, one per run) from inputs that are fully named by their key:
// OpenAPI documents, CRD type converters, parsed CRD files. A value is
// never modified after it is built; callers that hand one out to code that
// may modify it copy it first. Past processMemoMax entries the memo is
// emptied (values are rebuilt, never wrong).
type processMemo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

const processMemoMax = 1024

// get returns the value for k, building it (outside the lock) if there is
// none; a build error is returned and nothing is kept.
func (p *processMemo[K, V]) get(k K, build func() (V, error)) (V, error) {
	p.mu.Lock()
	v, ok := p.m[k]
	p.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	p.mu.Lock()
	if p.m == nil || len(p.m) >= processMemoMax {
		p.m = map[K]V{}
	}
	p.m[k] = v
	p.mu.Unlock()
	return v, nil
}

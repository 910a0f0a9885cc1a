package apiserver

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A mapping is one kind told to the REST mapper: with its resources
// (AddSpecific) or, for a list kind, with its scope only (Add).
type mapping struct {
	kind             schema.GroupVersionKind
	plural, singular schema.GroupVersionResource // zero: Add
	scope            meta.RESTScope
}

func (s *Server) addMapping(m mapping) {
	s.mappings = append(s.mappings, m)
	apply(s.mapper, m)
}

func apply(mapper *meta.DefaultRESTMapper, m mapping) {
	if m.plural.Empty() {
		mapper.Add(m.kind, m.scope)
		return
	}
	mapper.AddSpecific(m.kind, m.plural, m.singular, m.scope)
}

// Clone returns a server in the state s is in, answering every request as
// s would from now on, with clock as its clock, and as if its writes had
// been made at the instant at: what a run gets from booting a server and
// installing its kinds at that instant, without doing it again (a Cluster
// API run spent a third of its time installing 20 CRDs; see
// explore.BootImage). It fails unless s's writes were all made at one
// instant (a boot inside a synctest bubble: time stands still), and s
// must have no observers (Observe): they belong to a run.
//
// Writes draw from math/rand's global source (the field manager, once per
// create); a clone has drawn nothing: see Redraw.
//
// The clone shares with s what neither changes once made: the scheme, each
// served Kind (its field managers, schemas and CRD; a kind served anew is
// a new Kind) and each stored object version that its move in time leaves
// as it is. Everything that changes (the store's history and log, the
// kinds served, the REST mapper, the uid and name sequences, the OpenAPI
// memos) is copied. Moving in time rewrites the times the server stamped:
// each event's, and in stored objects' metadata and status every
// timestamp equal to s's instant (creationTimestamp, managed fields,
// conditions' lastTransitionTime), as metav1.Time writes them (UTC, to the
// second).
func (s *Server) Clone(clock func() time.Time, at time.Time) (*Server, error) {
	if len(s.observers) > 0 {
		return nil, fmt.Errorf("apiserver: Clone of a server with observers")
	}
	was, ok := s.store.Instant()
	if !ok {
		return nil, fmt.Errorf("apiserver: Clone of a server whose writes were not all made at one instant")
	}
	if clock == nil {
		clock = time.Now
	}
	c := &Server{
		scheme:    s.scheme,
		clock:     clock,
		ablate:    s.ablate,
		kinds:     maps.Clone(s.kinds),
		mapper:    meta.NewDefaultRESTMapper(nil),
		mappings:  slices.Clone(s.mappings),
		scaleFM:   s.scaleFM,
		uidSeq:    s.uidSeq,
		nameSeq:   s.nameSeq,
		notified:  s.notified,
		openAPI:   maps.Clone(s.openAPI),
		builtinV3: maps.Clone(s.builtinV3),
		// The front's handlers are built again on first use, over the
		// clone's own storages (as registry and kv are).
		builtinConv: s.builtinConv,
	}
	c.store = s.store.Clone(c.now)
	c.randDraws = s.randDraws
	for _, m := range c.mappings {
		apply(c.mapper, m)
	}
	if !at.Equal(was) {
		from, to := metaTime(was), metaTime(at)
		var retime func(*unstructured.Unstructured) *unstructured.Unstructured // nil: within one second, no object changes
		if from != to {
			retime = func(u *unstructured.Unstructured) *unstructured.Unstructured {
				var out *unstructured.Unstructured
				for _, f := range []string{"metadata", "status"} {
					v, ok := u.Object[f]
					if !ok {
						continue
					}
					if nv, changed := retimeValue(v, from, to); changed {
						if out == nil {
							out = &unstructured.Unstructured{Object: maps.Clone(u.Object)}
						}
						out.Object[f] = nv
					}
				}
				return out
			}
		}
		c.store.Retime(at.Sub(was), retime)
	}
	return c, nil
}

// metaTime is t as a metav1.Time in an object: UTC, to the second.
func metaTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// retimeValue returns v with every string equal to from replaced by to,
// copying only the maps and slices on the way to a replacement.
func retimeValue(v any, from, to string) (any, bool) {
	switch x := v.(type) {
	case string:
		if x == from {
			return to, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne, changed := retimeValue(e, from, to); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if ne, changed := retimeValue(e, from, to); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// Redraw draws from math/rand's global source what s's writes drew
// (kube-apiserver's field manager draws once per create, the same call):
// after a clone, what is drawn next is then what would be drawn next after
// the writes themselves. Without it a run from a clone draws other numbers
// than a run that booted (a controller's jittered requeue, say), and its
// trace differs.
func (s *Server) Redraw() {
	for range s.randDraws {
		_ = rand.Float32() //nolint:gosec // the call upstream makes
	}
}

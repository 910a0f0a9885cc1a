package store

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Key names one object: its kind (group+kind; the store keeps one version
// per kind), namespace and name.
type Key struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
}

// String renders the key as "Kind.group ns/name" (or "Kind.group name").
func (k Key) String() string {
	gk := k.GroupKind.Kind
	if k.GroupKind.Group != "" {
		gk += "." + k.GroupKind.Group
	}
	if k.Namespace == "" {
		return gk + " " + k.Name
	}
	return gk + " " + k.Namespace + "/" + k.Name
}

// EventType is the kind of change a watch event reports.
type EventType string

// The three watch event types, as kube-apiserver names them.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one entry of the store's change log: the object as written at
// revision Rev (for Deleted, the object's last state), and the state it
// replaced (nil for Added).
type Event struct {
	Rev    int64
	Type   EventType
	Key    Key
	Time   time.Time
	Object *unstructured.Unstructured
	Prev   *unstructured.Unstructured
}

type version struct {
	rev int64
	obj *unstructured.Unstructured // nil: deleted at rev
}

// Reader is a Store's read-only side: what the engine outside the API
// server (views, traces, hashing) may use. Writes go through the server.
type Reader interface {
	// Rev returns the latest revision.
	Rev() int64
	// Get returns the object as of revision atRev (0: latest).
	Get(key Key, atRev int64) (*unstructured.Unstructured, bool)
	// CurrentRev returns the revision of the object's latest version.
	CurrentRev(key Key) int64
	// List returns a kind's objects in a namespace ("" for all) as of atRev.
	List(gk schema.GroupKind, ns string, atRev int64) []*unstructured.Unstructured
	// PeekList is List without copies: the objects must not be modified.
	PeekList(gk schema.GroupKind, ns string, atRev int64) []*unstructured.Unstructured
	// Kinds returns the kinds that have ever been stored.
	Kinds() []schema.GroupKind
	// Events returns the log entries with after < Rev <= upto.
	Events(after, upto int64) []Event
	// RevAt returns the latest revision written at or before t.
	RevAt(t time.Time) int64
	// TimeOf returns the time revision rev was written.
	TimeOf(rev int64) time.Time
	// Epoch counts the re-decodes of stored content (see Store.Redecode).
	Epoch() int64
}

var _ Reader = (*Store)(nil)

// Store is a multi-version object store. It is not safe for concurrent use:
// the engine serialises all API calls (see package explore).
type Store struct {
	rev     int64
	history map[Key][]version
	byKind  map[schema.GroupKind][]Key // insertion order; sorted on read
	log     []Event
	clock   func() time.Time
	// epoch counts Redecode calls that changed something: a stored
	// version's content is fixed for one epoch.
	epoch int64
}

// New returns an empty store whose events are stamped with clock().
func New(clock func() time.Time) *Store {
	if clock == nil {
		clock = time.Now
	}
	return &Store{history: map[Key][]version{}, byKind: map[schema.GroupKind][]Key{}, clock: clock}
}

// Rev returns the current (latest) revision.
func (s *Store) Rev() int64 { return s.rev }

// ConflictError is returned by Put and Delete when the object's current
// revision is not the expected one.
type ConflictError struct {
	Key      Key
	Expected int64
	Actual   int64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: %s: expected revision %d, found %d", e.Key, e.Expected, e.Actual)
}

// current returns the latest live version of key, or nil.
func (s *Store) latest(key Key, atRev int64) *version {
	h := s.history[key]
	i := len(h) - 1
	if atRev > 0 {
		// history is sorted by rev; find the last entry with rev <= atRev.
		i = -1
		for j := len(h) - 1; j >= 0; j-- {
			if h[j].rev <= atRev {
				i = j
				break
			}
		}
	}
	if i < 0 || h[i].obj == nil {
		return nil
	}
	return &h[i]
}

// Get returns a copy of the object as of revision atRev (0: latest).
func (s *Store) Get(key Key, atRev int64) (*unstructured.Unstructured, bool) {
	v := s.latest(key, atRev)
	if v == nil {
		return nil, false
	}
	return v.obj.DeepCopy(), true
}

// Peek returns the stored object as of revision atRev (0: latest) and the
// revision that wrote it, without copying: the object is shared with the
// store and must not be modified (a stored version changes only when
// Redecode replaces it: the revision and Epoch identify its content).
func (s *Store) Peek(key Key, atRev int64) (*unstructured.Unstructured, int64, bool) {
	v := s.latest(key, atRev)
	if v == nil {
		return nil, 0, false
	}
	return v.obj, v.rev, true
}

// Redecode replaces the stored content of every version of gk's objects
// (history and log, revisions unchanged) by what decode returns for it
// (nil: unchanged), as when kube-apiserver reads stored objects through a
// new decoder (a custom resource's storage codec prunes and defaults with
// the CRD's current schema on every read from etcd). It returns how many
// versions changed; if any did, Epoch advances. Objects handed out before
// keep their old content, as clients keep what they decoded before.
func (s *Store) Redecode(gk schema.GroupKind, decode func(*unstructured.Unstructured) *unstructured.Unstructured) int {
	changed := s.rewrite(func(k Key) bool { return k.GroupKind == gk }, decode)
	if changed > 0 {
		s.epoch++
	}
	return changed
}

// rewrite replaces the stored versions of the keys in, in the history and
// the log, by what fn returns for each (nil: unchanged; a version shared by
// history and log is rewritten once), and returns how many versions of the
// history changed.
func (s *Store) rewrite(in func(Key) bool, fn func(*unstructured.Unstructured) *unstructured.Unstructured) int {
	done := map[*unstructured.Unstructured]*unstructured.Unstructured{}
	redo := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		if o == nil {
			return nil
		}
		if n, ok := done[o]; ok {
			return n
		}
		n := fn(o)
		if n == nil {
			n = o
		}
		done[o] = n
		return n
	}
	changed := 0
	for key, h := range s.history {
		if !in(key) {
			continue
		}
		for i := range h {
			if n := redo(h[i].obj); n != h[i].obj {
				h[i].obj = n
				changed++
			}
		}
	}
	for i := range s.log {
		if !in(s.log[i].Key) {
			continue
		}
		s.log[i].Object = redo(s.log[i].Object)
		s.log[i].Prev = redo(s.log[i].Prev)
	}
	return changed
}

// Epoch counts the Redecode calls that changed stored content: (revision,
// epoch) names a version's content.
func (s *Store) Epoch() int64 { return s.epoch }

// CurrentRev returns the revision at which key was last written, 0 if it
// does not exist.
func (s *Store) CurrentRev(key Key) int64 {
	if v := s.latest(key, 0); v != nil {
		return v.rev
	}
	return 0
}

// List returns copies of all objects of gk in namespace ns ("" = all) as of
// revision atRev (0: latest), sorted by namespace then name.
func (s *Store) List(gk schema.GroupKind, ns string, atRev int64) []*unstructured.Unstructured {
	return s.list(gk, ns, atRev, true)
}

// list is List (copies) and PeekList (shared objects).
func (s *Store) list(gk schema.GroupKind, ns string, atRev int64, copies bool) []*unstructured.Unstructured {
	keys := slices.Clone(s.byKind[gk])
	slices.SortFunc(keys, func(a, b Key) int {
		if a.Namespace != b.Namespace {
			if a.Namespace < b.Namespace {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	var out []*unstructured.Unstructured
	for _, k := range keys {
		if ns != "" && k.Namespace != ns {
			continue
		}
		switch v := s.latest(k, atRev); {
		case v == nil:
		case copies:
			out = append(out, v.obj.DeepCopy())
		default:
			out = append(out, v.obj)
		}
	}
	return out
}

// PeekList is List without copying: the objects are shared with the store
// and must not be modified (as Peek's). A predicate evaluated between
// steps reads every object; copying them all for it was a fifth of a
// Cluster API run.
func (s *Store) PeekList(gk schema.GroupKind, ns string, atRev int64) []*unstructured.Unstructured {
	return s.list(gk, ns, atRev, false)
}

// KeysOf returns the keys of gk's objects that exist as of revision atRev
// (0: latest), in no particular order: what an etcd range over a
// resource's prefix enumerates (package etcdkv orders them as etcd does,
// by key bytes).
func (s *Store) KeysOf(gk schema.GroupKind, atRev int64) []Key {
	var out []Key
	for _, k := range s.byKind[gk] {
		if s.latest(k, atRev) != nil {
			out = append(out, k)
		}
	}
	return out
}

// Incarnation returns, for key as of revision atRev (0: latest), the
// revision that created the object's current incarnation (the first write
// after its last delete) and how many writes it has had since, counting
// that one: etcd's CreateRevision and Version. ok is false if the key does
// not exist at atRev.
func (s *Store) Incarnation(key Key, atRev int64) (create, version int64, ok bool) {
	h := s.history[key]
	end := len(h)
	if atRev > 0 {
		end = 0
		for end < len(h) && h[end].rev <= atRev {
			end++
		}
	}
	if end == 0 || h[end-1].obj == nil {
		return 0, 0, false
	}
	for i := end - 1; i >= 0 && h[i].obj != nil; i-- {
		create, version = h[i].rev, version+1
	}
	return create, version, true
}

// Kinds returns every kind that has ever been written, sorted.
func (s *Store) Kinds() []schema.GroupKind {
	var out []schema.GroupKind
	for gk := range s.byKind {
		out = append(out, gk)
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int {
		if a.String() < b.String() {
			return -1
		} else if a.String() > b.String() {
			return 1
		}
		return 0
	})
	return out
}

// Put writes obj under key if the key's current revision equals expect
// (0: the key must not exist). It stamps the new revision into
// metadata.resourceVersion, records an event and returns the stored copy.
func (s *Store) Put(key Key, obj *unstructured.Unstructured, expect int64) (*unstructured.Unstructured, error) {
	cur := s.latest(key, 0)
	var curRev int64
	if cur != nil {
		curRev = cur.rev
	}
	if curRev != expect {
		return nil, &ConflictError{Key: key, Expected: expect, Actual: curRev}
	}
	s.rev++
	stored := obj.DeepCopy()
	stored.SetResourceVersion(strconv.FormatInt(s.rev, 10))
	if _, ok := s.history[key]; !ok {
		s.byKind[key.GroupKind] = append(s.byKind[key.GroupKind], key)
	}
	s.history[key] = append(s.history[key], version{rev: s.rev, obj: stored})
	ev := Event{Rev: s.rev, Type: Added, Key: key, Time: s.clock(), Object: stored}
	if cur != nil {
		ev.Type = Modified
		ev.Prev = cur.obj
	}
	s.log = append(s.log, ev)
	return stored.DeepCopy(), nil
}

// Delete removes key if its current revision equals expect. The DELETED
// event carries last (the object's final content, e.g. with an updated
// resourceVersion, as etcd's delete reports the revision of the delete).
func (s *Store) Delete(key Key, last *unstructured.Unstructured, expect int64) (*unstructured.Unstructured, error) {
	cur := s.latest(key, 0)
	if cur == nil {
		return nil, &ConflictError{Key: key, Expected: expect, Actual: 0}
	}
	if cur.rev != expect {
		return nil, &ConflictError{Key: key, Expected: expect, Actual: cur.rev}
	}
	s.rev++
	final := last.DeepCopy()
	final.SetResourceVersion(strconv.FormatInt(s.rev, 10))
	s.history[key] = append(s.history[key], version{rev: s.rev})
	s.log = append(s.log, Event{Rev: s.rev, Type: Deleted, Key: key, Time: s.clock(), Object: final, Prev: cur.obj})
	return final.DeepCopy(), nil
}

// Events returns the log entries with after < Rev <= upto (upto 0: latest),
// in revision order. The returned events share objects with the store:
// callers must not mutate them.
func (s *Store) Events(after, upto int64) []Event {
	if upto == 0 || upto > s.rev {
		upto = s.rev
	}
	// Revisions are dense (1..rev) and the log holds exactly one event per
	// revision, so the log index of revision r is r-1.
	if after >= upto {
		return nil
	}
	if after < 0 {
		after = 0
	}
	// Cap the slice so that a caller's append cannot overwrite later entries.
	return s.log[after:upto:upto]
}

// RevAt returns the latest revision written at or before t (0 if none).
func (s *Store) RevAt(t time.Time) int64 {
	i, _ := slices.BinarySearchFunc(s.log, t, func(e Event, t time.Time) int {
		if e.Time.After(t) {
			return 1
		}
		return -1
	})
	if i == 0 {
		return 0
	}
	return s.log[i-1].Rev
}

// TimeOf returns the time revision rev was written.
func (s *Store) TimeOf(rev int64) time.Time {
	if rev <= 0 || rev > s.rev {
		return time.Time{}
	}
	return s.log[rev-1].Time
}

// Retime moves the store's past by d: each event's time, and each stored
// version's content as retime returns it (nil: unchanged; a nil retime
// changes no version). It is for a
// clone whose content was written at another instant (apiserver.Clone);
// the epoch does not change, as the content is what a store written at the
// new instant would hold.
func (s *Store) Retime(d time.Duration, retime func(*unstructured.Unstructured) *unstructured.Unstructured) {
	if retime != nil {
		s.rewrite(func(Key) bool { return true }, retime)
	}
	for i := range s.log {
		s.log[i].Time = s.log[i].Time.Add(d)
	}
}

// Instant returns the time every event in the log was written at, if they
// were all written at one (and there is at least one).
func (s *Store) Instant() (time.Time, bool) {
	if len(s.log) == 0 {
		return time.Time{}, false
	}
	at := s.log[0].Time
	for _, ev := range s.log[1:] {
		if !ev.Time.Equal(at) {
			return time.Time{}, false
		}
	}
	return at, true
}

// Clone returns a store holding what s holds, stamping its new events with
// clock. Stored versions are shared, not copied: the store never modifies
// one once stored (Redecode replaces them), and readers must not either.
func (s *Store) Clone(clock func() time.Time) *Store {
	if clock == nil {
		clock = time.Now
	}
	c := &Store{rev: s.rev, epoch: s.epoch, clock: clock, log: slices.Clone(s.log),
		history: make(map[Key][]version, len(s.history)), byKind: make(map[schema.GroupKind][]Key, len(s.byKind))}
	for k, h := range s.history {
		c.history[k] = slices.Clone(h)
	}
	for gk, keys := range s.byKind {
		c.byKind[gk] = slices.Clone(keys)
	}
	return c
}

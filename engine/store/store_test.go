package store_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/store"
)

var (
	cmGK     = schema.GroupKind{Kind: "ConfigMap"}
	deployGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}
)

// clock is a controllable clock: it returns the current instant and only
// moves when told to.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func newStore() (*store.Store, *clock) {
	c := &clock{t: epoch}
	return store.New(c.now), c
}

func key(gk schema.GroupKind, ns, name string) store.Key {
	return store.Key{GroupKind: gk, Namespace: ns, Name: name}
}

func cm(ns, name, v string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"v": v}}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func dataV(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	v, _, err := unstructured.NestedString(u.Object, "data", "v")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// put writes obj under its own key, expecting the key's current revision.
func put(t *testing.T, s *store.Store, obj *unstructured.Unstructured, expect int64) *unstructured.Unstructured {
	t.Helper()
	out, err := s.Put(key(cmGK, obj.GetNamespace(), obj.GetName()), obj, expect)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func TestKeyString(t *testing.T) {
	cases := []struct {
		key  store.Key
		want string
	}{
		{key(cmGK, "ns", "a"), "ConfigMap ns/a"},
		{key(deployGK, "ns", "a"), "Deployment.apps ns/a"},
		{key(schema.GroupKind{Kind: "Namespace"}, "", "default"), "Namespace default"},
	}
	for _, tc := range cases {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%#v: got %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestStore(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, s *store.Store, c *clock)
	}{
		{"revisions are dense and global across keys and kinds", func(t *testing.T, s *store.Store, c *clock) {
			if s.Rev() != 0 {
				t.Fatalf("empty store at rev %d", s.Rev())
			}
			a := put(t, s, cm("ns", "a", "1"), 0)
			b := put(t, s, cm("ns", "b", "1"), 0)
			d, err := s.Put(key(deployGK, "ns", "a"), cm("ns", "a", "x"), 0)
			if err != nil {
				t.Fatal(err)
			}
			a2 := put(t, s, cm("ns", "a", "2"), 1)
			del, err := s.Delete(key(cmGK, "ns", "b"), b, 2)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range []*unstructured.Unstructured{a, b, d, a2, del} {
				got = append(got, o.GetResourceVersion())
			}
			if want := []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
				t.Fatalf("resourceVersions %v, want %v", got, want)
			}
			if s.Rev() != 5 {
				t.Fatalf("rev %d", s.Rev())
			}
			for i, ev := range s.Events(0, 0) {
				if ev.Rev != int64(i+1) {
					t.Fatalf("event %d has rev %d", i, ev.Rev)
				}
			}
			if got := s.CurrentRev(key(cmGK, "ns", "a")); got != 4 {
				t.Errorf("CurrentRev(a) = %d", got)
			}
			if got := s.CurrentRev(key(cmGK, "ns", "b")); got != 0 {
				t.Errorf("CurrentRev(deleted b) = %d", got)
			}
		}},
		{"Put with a wrong expected revision is a ConflictError and writes nothing", func(t *testing.T, s *store.Store, c *clock) {
			put(t, s, cm("ns", "a", "1"), 0)
			put(t, s, cm("ns", "a", "2"), 1)
			cases := []struct {
				name   string
				obj    *unstructured.Unstructured
				expect int64
				actual int64
			}{
				{"stale", cm("ns", "a", "x"), 1, 2},
				{"future", cm("ns", "a", "x"), 9, 2},
				{"create over existing", cm("ns", "a", "x"), 0, 2},
				{"update of missing", cm("ns", "zz", "x"), 2, 0},
			}
			for _, tc := range cases {
				k := key(cmGK, tc.obj.GetNamespace(), tc.obj.GetName())
				_, err := s.Put(k, tc.obj, tc.expect)
				var ce *store.ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("%s: got %v, want *ConflictError", tc.name, err)
				}
				if ce.Key != k || ce.Expected != tc.expect || ce.Actual != tc.actual {
					t.Errorf("%s: %+v", tc.name, ce)
				}
				if ce.Error() == "" {
					t.Errorf("%s: empty message", tc.name)
				}
			}
			if s.Rev() != 2 || len(s.Events(0, 0)) != 2 {
				t.Fatalf("a refused Put changed the store: rev %d", s.Rev())
			}
			if got, _ := s.Get(key(cmGK, "ns", "a"), 0); dataV(t, got) != "2" {
				t.Fatalf("content changed: %v", got.Object)
			}
		}},
		{"Delete with a wrong expected revision or of a missing key is a ConflictError", func(t *testing.T, s *store.Store, c *clock) {
			a := put(t, s, cm("ns", "a", "1"), 0)
			var ce *store.ConflictError
			if _, err := s.Delete(key(cmGK, "ns", "a"), a, 7); !errors.As(err, &ce) || ce.Actual != 1 {
				t.Fatalf("stale delete: %v", err)
			}
			if _, err := s.Delete(key(cmGK, "ns", "zz"), a, 0); !errors.As(err, &ce) || ce.Actual != 0 {
				t.Fatalf("delete of missing: %v", err)
			}
			if s.Rev() != 1 {
				t.Fatalf("rev %d", s.Rev())
			}
		}},
		{"Get and List at a past revision", func(t *testing.T, s *store.Store, c *clock) {
			put(t, s, cm("ns", "a", "1"), 0)                                                 // 1
			put(t, s, cm("ns", "a", "2"), 1)                                                 // 2
			b := put(t, s, cm("ns", "b", "1"), 0)                                            // 3
			if _, err := s.Delete(key(cmGK, "ns", "a"), cm("ns", "a", "2"), 2); err != nil { // 4
				t.Fatal(err)
			}
			put(t, s, cm("ns", "a", "3"), 0) // 5: recreated
			_ = b
			cases := []struct {
				rev   int64
				a     string // "" = absent
				items []string
			}{
				{1, "1", []string{"ns/a"}},
				{2, "2", []string{"ns/a"}},
				{3, "2", []string{"ns/a", "ns/b"}},
				{4, "", []string{"ns/b"}},
				{5, "3", []string{"ns/a", "ns/b"}},
				{0, "3", []string{"ns/a", "ns/b"}},
				{99, "3", []string{"ns/a", "ns/b"}}, // beyond the head: the latest
			}
			for _, tc := range cases {
				got, ok := s.Get(key(cmGK, "ns", "a"), tc.rev)
				switch {
				case tc.a == "" && ok:
					t.Errorf("rev %d: a exists: %v", tc.rev, got.Object)
				case tc.a != "" && !ok:
					t.Errorf("rev %d: a missing", tc.rev)
				case ok && dataV(t, got) != tc.a:
					t.Errorf("rev %d: a has v=%s, want %s", tc.rev, dataV(t, got), tc.a)
				}
				if l := names(s.List(cmGK, "", tc.rev)); !slices.Equal(l, tc.items) {
					t.Errorf("rev %d: list %v, want %v", tc.rev, l, tc.items)
				}
			}
			// Before the first write nothing exists.
			if got := s.List(deployGK, "", 0); len(got) != 0 {
				t.Errorf("other kind: %v", names(got))
			}
			if got, _ := s.Get(key(cmGK, "ns", "a"), 1); got.GetResourceVersion() != "1" {
				t.Errorf("past read carries rv %s", got.GetResourceVersion())
			}
		}},
		{"List sorts by namespace then name and filters by namespace", func(t *testing.T, s *store.Store, c *clock) {
			for _, nn := range [][2]string{{"b", "z"}, {"a", "y"}, {"b", "a"}, {"a", "x"}, {"ab", "a"}} {
				put(t, s, cm(nn[0], nn[1], "1"), 0)
			}
			if _, err := s.Put(key(deployGK, "a", "d"), cm("a", "d", "1"), 0); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				ns   string
				want []string
			}{
				{"", []string{"a/x", "a/y", "ab/a", "b/a", "b/z"}},
				{"a", []string{"a/x", "a/y"}},
				{"b", []string{"b/a", "b/z"}},
				{"none", nil},
			}
			for _, tc := range cases {
				if got := names(s.List(cmGK, tc.ns, 0)); !slices.Equal(got, tc.want) {
					t.Errorf("ns %q: %v, want %v", tc.ns, got, tc.want)
				}
			}
			if got, want := s.Kinds(), []schema.GroupKind{cmGK, deployGK}; !slices.Equal(got, want) {
				t.Errorf("kinds %v, want %v", got, want)
			}
		}},
		{"Delete records DELETED with the final object and a new revision", func(t *testing.T, s *store.Store, c *clock) {
			a := put(t, s, cm("ns", "a", "1"), 0) // 1
			c.advance(time.Second)
			last := a.DeepCopy()
			last.SetFinalizers(nil)
			last.SetAnnotations(map[string]string{"final": "yes"})
			got, err := s.Delete(key(cmGK, "ns", "a"), last, 1) // 2
			if err != nil {
				t.Fatal(err)
			}
			if got.GetResourceVersion() != "2" || got.GetAnnotations()["final"] != "yes" {
				t.Fatalf("returned %v", got.Object["metadata"])
			}
			if last.GetResourceVersion() != "1" {
				t.Errorf("Delete stamped the caller's object: rv %s", last.GetResourceVersion())
			}
			evs := s.Events(1, 2)
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			ev := evs[0]
			if ev.Type != store.Deleted || ev.Rev != 2 || ev.Key != key(cmGK, "ns", "a") || !ev.Time.Equal(epoch.Add(time.Second)) {
				t.Fatalf("event %+v", ev)
			}
			if ev.Object.GetResourceVersion() != "2" || ev.Object.GetAnnotations()["final"] != "yes" {
				t.Errorf("event object %v", ev.Object.Object["metadata"])
			}
			if ev.Prev == nil || ev.Prev.GetResourceVersion() != "1" {
				t.Errorf("event prev %v", ev.Prev)
			}
			if _, ok := s.Get(key(cmGK, "ns", "a"), 0); ok {
				t.Errorf("still there")
			}
			if _, ok := s.Get(key(cmGK, "ns", "a"), 1); !ok {
				t.Errorf("history lost")
			}
			// Re-creating after a delete is a create (expect 0), an ADDED event.
			put(t, s, cm("ns", "a", "again"), 0)
			if ev := s.Events(2, 0)[0]; ev.Type != store.Added || ev.Prev != nil {
				t.Errorf("re-create event %+v", ev)
			}
		}},
		{"event types and Prev", func(t *testing.T, s *store.Store, c *clock) {
			put(t, s, cm("ns", "a", "1"), 0)
			put(t, s, cm("ns", "a", "2"), 1)
			evs := s.Events(0, 0)
			if evs[0].Type != store.Added || evs[0].Prev != nil || dataV(t, evs[0].Object) != "1" {
				t.Errorf("add %+v", evs[0])
			}
			if evs[1].Type != store.Modified || evs[1].Prev == nil || dataV(t, evs[1].Prev) != "1" || dataV(t, evs[1].Object) != "2" {
				t.Errorf("modify %+v", evs[1])
			}
		}},
		{"Events(after, upto) slices the log", func(t *testing.T, s *store.Store, c *clock) {
			for i := range 5 {
				put(t, s, cm("ns", string(rune('a'+i)), "1"), 0)
			}
			cases := []struct {
				after, upto int64
				want        []int64
			}{
				{0, 0, []int64{1, 2, 3, 4, 5}},
				{0, 5, []int64{1, 2, 3, 4, 5}},
				{2, 0, []int64{3, 4, 5}},
				{2, 4, []int64{3, 4}},
				{1, 2, []int64{2}},
				{3, 3, nil},
				{4, 2, nil},
				{5, 0, nil},
				{9, 0, nil},
				{0, 99, []int64{1, 2, 3, 4, 5}},
				{-3, 1, []int64{1}},
			}
			for _, tc := range cases {
				var got []int64
				for _, ev := range s.Events(tc.after, tc.upto) {
					got = append(got, ev.Rev)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("Events(%d, %d) = %v, want %v", tc.after, tc.upto, got, tc.want)
				}
			}
		}},
		{"appending to an Events slice does not overwrite the log", func(t *testing.T, s *store.Store, c *clock) {
			for i := range 3 {
				put(t, s, cm("ns", string(rune('a'+i)), "1"), 0)
			}
			evs := s.Events(0, 1)
			_ = append(evs, store.Event{Rev: 99})
			if got := s.Events(1, 2)[0].Rev; got != 2 {
				t.Fatalf("log entry of rev 2 now has rev %d", got)
			}
			if got := s.TimeOf(2); !got.Equal(epoch) {
				t.Fatalf("TimeOf(2) = %v", got)
			}
		}},
		{"RevAt and TimeOf follow the clock", func(t *testing.T, s *store.Store, c *clock) {
			c.advance(time.Second)
			put(t, s, cm("ns", "a", "1"), 0) // rev 1 at +1s
			put(t, s, cm("ns", "b", "1"), 0) // rev 2 at +1s
			c.advance(2 * time.Second)
			put(t, s, cm("ns", "a", "2"), 1) // rev 3 at +3s
			c.advance(time.Second)
			if _, err := s.Delete(key(cmGK, "ns", "b"), cm("ns", "b", "1"), 2); err != nil { // rev 4 at +4s
				t.Fatal(err)
			}
			at := func(d time.Duration) time.Time { return epoch.Add(d) }
			revAt := []struct {
				t    time.Time
				want int64
			}{
				{at(0), 0},
				{at(999 * time.Millisecond), 0},
				{at(time.Second), 2},
				{at(2 * time.Second), 2},
				{at(3 * time.Second), 3},
				{at(3*time.Second + 1), 3},
				{at(4 * time.Second), 4},
				{at(time.Hour), 4},
			}
			for _, tc := range revAt {
				if got := s.RevAt(tc.t); got != tc.want {
					t.Errorf("RevAt(%v) = %d, want %d", tc.t.Sub(epoch), got, tc.want)
				}
			}
			timeOf := []struct {
				rev  int64
				want time.Time
			}{
				{-1, time.Time{}},
				{0, time.Time{}},
				{1, at(time.Second)},
				{2, at(time.Second)},
				{3, at(3 * time.Second)},
				{4, at(4 * time.Second)},
				{5, time.Time{}},
			}
			for _, tc := range timeOf {
				if got := s.TimeOf(tc.rev); !got.Equal(tc.want) {
					t.Errorf("TimeOf(%d) = %v, want %v", tc.rev, got, tc.want)
				}
			}
		}},
		{"RevAt on an empty store is 0", func(t *testing.T, s *store.Store, c *clock) {
			if got := s.RevAt(epoch.Add(time.Hour)); got != 0 {
				t.Fatalf("RevAt = %d", got)
			}
		}},
		{"returned objects are copies", func(t *testing.T, s *store.Store, c *clock) {
			in := cm("ns", "a", "1")
			out, err := s.Put(key(cmGK, "ns", "a"), in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if in.GetResourceVersion() != "" {
				t.Errorf("Put stamped the caller's object")
			}
			// Mutate the input, the result of Put, of Get and of List.
			_ = unstructured.SetNestedField(in.Object, "in", "data", "v")
			_ = unstructured.SetNestedField(out.Object, "out", "data", "v")
			g, _ := s.Get(key(cmGK, "ns", "a"), 0)
			_ = unstructured.SetNestedField(g.Object, "get", "data", "v")
			g.SetLabels(map[string]string{"x": "y"})
			l := s.List(cmGK, "", 0)
			_ = unstructured.SetNestedField(l[0].Object, "list", "data", "v")
			gp, _ := s.Get(key(cmGK, "ns", "a"), 1)
			_ = unstructured.SetNestedField(gp.Object, "past", "data", "v")
			for _, rev := range []int64{0, 1} {
				got, _ := s.Get(key(cmGK, "ns", "a"), rev)
				if dataV(t, got) != "1" || got.GetLabels() != nil {
					t.Fatalf("store changed through a returned object: %v", got.Object)
				}
			}
			if ev := s.Events(0, 0)[0]; dataV(t, ev.Object) != "1" {
				t.Fatalf("event object changed: %v", ev.Object.Object)
			}
			last := cm("ns", "a", "1")
			del, err := s.Delete(key(cmGK, "ns", "a"), last, 1)
			if err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedField(last.Object, "last", "data", "v")
			_ = unstructured.SetNestedField(del.Object, "del", "data", "v")
			if ev := s.Events(1, 0)[0]; dataV(t, ev.Object) != "1" {
				t.Fatalf("deleted event object changed: %v", ev.Object.Object)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newStore()
			tc.run(t, s, c)
		})
	}
}

func TestNewDefaultsToTimeNow(t *testing.T) {
	s := store.New(nil)
	before := time.Now()
	if _, err := s.Put(key(cmGK, "ns", "a"), cm("ns", "a", "1"), 0); err != nil {
		t.Fatal(err)
	}
	if got := s.TimeOf(1); got.Before(before) || got.After(time.Now()) {
		t.Fatalf("TimeOf(1) = %v, not between %v and now", got, before)
	}
}

// TestRedecode: re-decoding a kind replaces every stored version's content
// (history and log, at its revision), leaves other kinds alone, and
// advances the epoch only when something changed.
func TestRedecode(t *testing.T) {
	s := store.New(nil)
	widget := store.Key{GroupKind: schema.GroupKind{Group: "example.org", Kind: "Widget"}, Namespace: "ns", Name: "w"}
	other := store.Key{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "c"}
	obj := func(b string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": "1", "b": b}}}
	}
	if _, err := s.Put(widget, obj("x"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(other, obj("x"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(widget, obj("y"), 1); err != nil {
		t.Fatal(err)
	}
	dropB := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		if _, ok := u.Object["spec"].(map[string]any)["b"]; !ok {
			return nil
		}
		c := u.DeepCopy()
		delete(c.Object["spec"].(map[string]any), "b")
		return c
	}
	if n := s.Redecode(widget.GroupKind, dropB); n != 2 || s.Epoch() != 1 {
		t.Fatalf("Redecode changed %d versions, epoch %d; want 2, 1", n, s.Epoch())
	}
	for _, rev := range []int64{1, 3} {
		u, ok := s.Get(widget, rev)
		if !ok || u.Object["spec"].(map[string]any)["b"] != nil || u.GetResourceVersion() != strconv.FormatInt(rev, 10) {
			t.Errorf("widget at %d: %v (ok %v), want spec without b at its revision", rev, u, ok)
		}
	}
	for _, ev := range s.Events(0, 0) {
		for _, o := range []*unstructured.Unstructured{ev.Object, ev.Prev} {
			if o == nil {
				continue
			}
			_, hasB := o.Object["spec"].(map[string]any)["b"]
			if hasB != (ev.Key == other) {
				t.Errorf("event %d of %s: b present %v", ev.Rev, ev.Key, hasB)
			}
		}
	}
	if n := s.Redecode(widget.GroupKind, dropB); n != 0 || s.Epoch() != 1 {
		t.Fatalf("second Redecode changed %d versions, epoch %d; want 0, 1", n, s.Epoch())
	}
}

// TestPeekList: PeekList lists what List lists, without copies (the very
// objects Peek returns), and a later write leaves a list taken before it
// as it was: a write stores a new version instead of changing one.
func TestPeekList(t *testing.T) {
	s, c := newStore()
	put(t, s, cm("b", "x", "1"), 0)
	a := put(t, s, cm("a", "y", "1"), 0)
	c.advance(time.Second)
	before := s.PeekList(cmGK, "", 0)
	if got, want := len(before), len(s.List(cmGK, "", 0)); got != want || got != 2 {
		t.Fatalf("PeekList: %d objects, List: %d, want 2", got, want)
	}
	if before[0].GetNamespace() != "a" || before[1].GetNamespace() != "b" {
		t.Errorf("PeekList order: %s, %s; want a, b", before[0].GetNamespace(), before[1].GetNamespace())
	}
	peeked, _, _ := s.Peek(key(cmGK, "a", "y"), 0)
	if before[0] != peeked {
		t.Errorf("PeekList copied the object Peek shares")
	}
	a.Object["data"] = map[string]any{"v": "2"}
	put(t, s, a, s.CurrentRev(key(cmGK, "a", "y")))
	if v := dataV(t, before[0]); v != "1" {
		t.Errorf("a list taken before a write changed with it: v=%s", v)
	}
	if v := dataV(t, s.PeekList(cmGK, "a", 0)[0]); v != "2" {
		t.Errorf("PeekList after the write: v=%s, want 2", v)
	}
}

// TestIncarnation pins etcd's per-key counters as the store derives them:
// create revision and version restart after a delete; KeysOf lists what
// exists at a revision.
func TestIncarnation(t *testing.T) {
	s, _ := newStore()
	k := key(cmGK, "a", "x")
	put(t, s, cm("a", "x", "1"), 0)                 // rev 1: created
	put(t, s, cm("a", "y", "1"), 0)                 // rev 2: another key
	put(t, s, cm("a", "x", "2"), 1)                 // rev 3: updated
	last, _ := s.Get(k, 0)                          //
	if _, err := s.Delete(k, last, 3); err != nil { // rev 4: deleted
		t.Fatal(err)
	}
	put(t, s, cm("a", "x", "3"), 0) // rev 5: created again
	tests := []struct {
		rev             int64
		create, version int64
		ok              bool
		keys            int
	}{
		{rev: 1, create: 1, version: 1, ok: true, keys: 1},
		{rev: 2, create: 1, version: 1, ok: true, keys: 2},
		{rev: 3, create: 1, version: 2, ok: true, keys: 2},
		{rev: 4, ok: false, keys: 1},
		{rev: 5, create: 5, version: 1, ok: true, keys: 2},
		{rev: 0, create: 5, version: 1, ok: true, keys: 2},
	}
	for _, tt := range tests {
		create, version, ok := s.Incarnation(k, tt.rev)
		if create != tt.create || version != tt.version || ok != tt.ok {
			t.Errorf("Incarnation at %d = (%d, %d, %v), want (%d, %d, %v)", tt.rev, create, version, ok, tt.create, tt.version, tt.ok)
		}
		if got := len(s.KeysOf(cmGK, tt.rev)); got != tt.keys {
			t.Errorf("KeysOf at %d: %d keys, want %d", tt.rev, got, tt.keys)
		}
	}
}

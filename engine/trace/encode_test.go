package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// reference encodes rec as the Writer did before appendStep: json.Encoder
// without HTML escaping.
func reference(t *testing.T, rec any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pieces are the strings generated steps are made of: plain text, every
// character encoding/json escapes, invalid UTF-8, multi-byte runes.
var pieces = []string{"", "a", "status.ready=true", `"`, `\`, "<&>", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
	"\u2028", "\u2029", "é", "日本", "\xff", "\xe2\x80", "🙂", "sha256:0a94", "-spec.suspend", "Conflict"}

func randString(r *rand.Rand) string {
	var b []byte
	for range r.Intn(4) {
		b = append(b, pieces[r.Intn(len(pieces))]...)
	}
	return string(b)
}

func randStrings(r *rand.Rand) []string {
	switch r.Intn(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	var out []string
	for range 1 + r.Intn(3) {
		out = append(out, randString(r))
	}
	return out
}

func randInt(r *rand.Rand) int64 {
	switch r.Intn(3) {
	case 0:
		return 0
	case 1:
		return -r.Int63n(1000)
	}
	return r.Int63()
}

func randStep(r *rand.Rand) *Step {
	s := &Step{Type: "step", Step: int(randInt(r)), T: randString(r), End: randString(r), Controller: randString(r),
		Request: randString(r), Resumes: int(randInt(r)), Result: randString(r), Requeue: randString(r),
		Error: randString(r), Panic: randString(r), Notes: randStrings(r)}
	if r.Intn(2) == 0 {
		s.Choice = &Choice{Options: randStrings(r), Chosen: int(randInt(r))}
	}
	switch r.Intn(3) {
	case 1:
		s.Views = map[string]View{}
	case 2:
		s.Views = map[string]View{}
		for range 1 + r.Intn(4) {
			s.Views[randString(r)] = View{Rev: randInt(r), Current: randInt(r)}
		}
	}
	for range r.Intn(4) {
		s.Ops = append(s.Ops, Op{T: randString(r), Verb: verb.Verb(randString(r)), Sub: randString(r), PatchType: types.PatchType(randString(r)),
			Kind: randString(r), Key: randString(r), Cached: r.Intn(2) == 0, ViewRev: randInt(r), Observed: randString(r),
			Current: randString(r), Pre: randString(r), Before: randString(r), After: randString(r), Items: int(randInt(r)),
			Outcome: randString(r), Error: randString(r), Changed: randStrings(r)})
	}
	if r.Intn(3) == 0 {
		s.Ops = []Op{}
	}
	for range r.Intn(3) {
		s.Events = append(s.Events, Event{T: randString(r), Object: randString(r), Type: randString(r), Reason: randString(r), Message: randString(r)})
	}
	return s
}

// TestAppendStep: appendStep writes what encoding/json writes, on
// generated steps (every field empty and set, every escaped character)
// and on every step of the corpus's recorded traces.
func TestAppendStep(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := range 20000 {
		s := randStep(r)
		if got, want := appendStep(nil, s), reference(t, s); !bytes.Equal(got, want) {
			t.Fatalf("generated step %d:\n got %s\nwant %s", i, got, want)
		}
	}
	files, err := filepath.Glob("../../findings/*/*.trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded traces under ../../findings")
	}
	steps := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var typ struct{ Type string }
			if err := json.Unmarshal(line, &typ); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if typ.Type != "step" {
				continue
			}
			var s Step
			if err := json.Unmarshal(line, &s); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			steps++
			if got := appendStep(nil, &s); !bytes.Equal(got, append(bytes.Clone(line), '\n')) {
				t.Fatalf("%s: step %d:\n got %s\nwant %s", f, s.Step, got, line)
			}
		}
	}
	t.Logf("%d generated steps, %d recorded steps (%d traces) encoded as encoding/json does", 20000, steps, len(files))
}

// TestWriterSteps: a Writer writes a step, by pointer or by value, as
// encoding/json does, and a nil step as null.
func TestWriterSteps(t *testing.T) {
	s := randStep(rand.New(rand.NewSource(2)))
	var nilStep *Step
	for _, rec := range []any{s, *s, nilStep} {
		w := NewWriter()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if want := reference(t, rec); !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%T: got %s, want %s", rec, w.Bytes(), want)
		}
	}
}

package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Header opens a trace.
type Header struct {
	Type          string            `json:"type"` // "header"
	Schema        int               `json:"schema"`
	Scenario      string            `json:"scenario"`
	Run           string            `json:"run,omitempty"`     // e.g. reproduce, control, ablation
	Variant       string            `json:"variant,omitempty"` // which run of the search (placement, schedule)
	Mode          string            `json:"mode"`
	Seed          int64             `json:"seed"`
	Engine        string            `json:"engine"`
	Upstream      map[string]string `json:"upstream,omitempty"`
	Controllers   []string          `json:"controllers"`
	Perturbations []string          `json:"perturbations,omitempty"`
	Ablations     []string          `json:"ablations,omitempty"`
	// Server is the simulated kube-apiserver release and FirstList how it
	// serves an informer's first list: "watch-list" (a consistent
	// snapshot) or "list-rv0" (a LIST at resourceVersion=0 from the watch
	// cache, as stale as it is). Both empty when the run names none.
	Server    string `json:"server,omitempty"`
	FirstList string `json:"firstList,omitempty"`
	// ReconcileDurations gives each process whose reconciles take time
	// its duration ("100ms", or "50ms..200ms" drawn per reconcile), and
	// each controller given its own ("<process>/<controller>").
	ReconcileDurations map[string]string `json:"reconcileDurations,omitempty"`
	// StubLatency gives, per process, the latency of each of its
	// harness's stubs of out-of-process calls that has one.
	StubLatency map[string]map[string]string `json:"stubLatency,omitempty"`
	// FeatureGates gives each process whose feature gates the scenario
	// sets those settings (the rest are upstream's defaults).
	FeatureGates map[string]map[string]bool `json:"featureGates,omitempty"`
}

// Choice records a scheduling decision: the runnable options and the one taken.
type Choice struct {
	Options []string `json:"options"`
	Chosen  int      `json:"chosen"`
}

// View is what a controller's informer for one kind showed during a step.
type View struct {
	Rev     int64 `json:"rev"`
	Current int64 `json:"current"`
}

// Op is one API call a controller made.
type Op struct {
	T         string          `json:"t"` // virtual time of the call
	Verb      verb.Verb       `json:"verb"`
	Sub       string          `json:"sub,omitempty"`
	PatchType types.PatchType `json:"patchType,omitempty"`
	Kind      string          `json:"kind"`
	Key       string          `json:"key,omitempty"`
	Cached    bool            `json:"cached,omitempty"`
	ViewRev   int64           `json:"viewRev,omitempty"`
	Observed  string          `json:"observed,omitempty"` // RV returned by a read
	Current   string          `json:"current,omitempty"`  // RV in the server at a cached read
	Pre       string          `json:"pre,omitempty"`      // RV precondition a write carried
	Before    string          `json:"before,omitempty"`
	After     string          `json:"after,omitempty"`
	Items     int             `json:"items,omitempty"`
	Outcome   string          `json:"outcome"` // ok, or the API error reason (Conflict, NotFound, ...)
	Error     string          `json:"error,omitempty"`
	// Changed summarises what an accepted write changed: the leaf paths
	// whose values differ, with the new value ("status.artifact.revision=
	// sha256:…", "metadata.finalizers=[…]", "-spec.suspend" for a removal),
	// bounded in number and length.
	Changed []string `json:"changed,omitempty"`
	// Managed summarises how the write changed metadata.managedFields: a
	// field manager entry ("manager (Operation[, subresource])") gained
	// "+", lost "-" or whose fields changed "~", with the fields gained
	// and lost; timestamp-only changes are left out.
	Managed []string `json:"managed,omitempty"`
}

// Stale reports whether a cached read saw an older version than the server had.
func (o Op) Stale() bool { return o.Cached && o.Current != "" && o.Observed != o.Current }

// Event is a Kubernetes event a controller emitted.
type Event struct {
	T       string `json:"t"`
	Object  string `json:"object"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Step is one reconcile of one request by one controller.
type Step struct {
	Type       string          `json:"type"` // "step"
	Step       int             `json:"step"`
	T          string          `json:"t"`   // virtual time at start
	End        string          `json:"end"` // virtual time at return
	Controller string          `json:"controller"`
	Request    string          `json:"request"`
	Choice     *Choice         `json:"choice,omitempty"`
	Views      map[string]View `json:"views,omitempty"`
	Ops        []Op            `json:"ops,omitempty"`
	Events     []Event         `json:"events,omitempty"`
	// Resumes is the step whose Reconcile this one continues: that step
	// ended as a "yield" (the Reconcile blocked) and this one runs what it
	// did when it woke.
	Resumes int `json:"resumes,omitempty"`
	// Result: ok, requeue, requeueAfter, error, terminal, panic, crash;
	// yield (blocked before returning: resumed by a later step);
	// abandoned (returned after its process restarted or its controller
	// was stopped: its outcome went to no queue).
	Result  string   `json:"result"`
	Requeue string   `json:"requeue,omitempty"`
	Error   string   `json:"error,omitempty"`
	Panic   string   `json:"panic,omitempty"`
	Notes   []string `json:"notes,omitempty"` // perturbations that switched on/off
}

// Action is a user action or external event applied by the engine.
type Action struct {
	Type    string `json:"type"` // "action"
	Step    int    `json:"step"`
	T       string `json:"t"`
	Name    string `json:"name"`
	Op      string `json:"op"`
	Key     string `json:"key"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// RV is the resourceVersion the action wrote; Changed summarises it as
	// Op.Changed does.
	RV      string   `json:"rv,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// Note is something that happened between steps: a perturbation window
// opening or closing, events dropped, a controller restarted.
type Note struct {
	Type string `json:"type"` // "note"
	Step int    `json:"step"` // the last step before it (0: before the first)
	T    string `json:"t"`
	Text string `json:"text"`
}

// Applied says how often a perturbation applied in a run.
type Applied struct {
	Perturbation string `json:"perturbation"`
	Times        int    `json:"times"`
}

// Verdict is an oracle's answer, as recorded.
type Verdict struct {
	Oracle string `json:"oracle"`
	Type   string `json:"type"`
	// Expr pins the oracle's definition (the CEL expression and scope, or
	// the oracle type's parameters): a replay whose oracle differs from the
	// recorded one is a mismatch, not a verdict.
	Expr     string `json:"expr,omitempty"`
	Holds    bool   `json:"holds"`
	Err      string `json:"err,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	// At is the write the verdict points at (oracle.Verdict.At), which
	// the timeline marks; absent when it names none.
	At *oracle.WriteAt `json:"at,omitempty"`
}

// Records are what the oracles judged, written just before the final line:
// a stored trace can be judged again offline (engine.Rejudge).
type Records struct {
	Type string `json:"type"` // "records"
	oracle.Records
}

// Final closes a trace.
type Final struct {
	Type      string `json:"type"` // "final"
	Steps     int    `json:"steps"`
	T         string `json:"t"`
	Stop      string `json:"stop"` // quiescent, horizon, maxSteps
	Pending   int    `json:"pending"`
	StateHash string `json:"stateHash"`
	// Applied has one entry per perturbation, in header order.
	Applied  []Applied `json:"applied,omitempty"`
	Verdicts []Verdict `json:"verdicts"`
}

// Trace is a decoded trace.
type Trace struct {
	Header  Header
	Steps   []Step
	Actions []Action
	Notes   []Note
	Final   *Final
	// Records are the run's oracle records (nil in a trace cut short).
	Records *oracle.Records
	// Lines keeps every record in order (Step, Action, Note values) for renderers.
	Lines []any
}

// Writer encodes records, one per line.
type Writer struct {
	buf chunks
	enc *json.Encoder
	// line is appendStep's scratch buffer.
	line []byte
}

// chunks is an append-only byte buffer kept in pieces, put together when
// asked for: a bytes.Buffer doubles, copying and clearing the whole trace
// each time, which made a long run's trace writing grow with its length
// (7 us a step at 50,000 steps). A new piece is as large as what was
// written so far (at least 512 bytes, at most chunkSize), so a short
// trace, which a search keeps for each of its runs, takes little more
// memory than its length, as with a bytes.Buffer (BenchmarkSearchMemory).
type chunks struct {
	full [][]byte // filled chunks, in order
	cur  []byte   // the chunk being filled
	n    int      // bytes in all
}

const chunkSize = 64 << 10

// Write appends p, for the JSON encoder; it never fails.
func (c *chunks) Write(p []byte) (int, error) {
	c.add(p)
	return len(p), nil
}

// add appends p.
func (c *chunks) add(p []byte) {
	c.n += len(p)
	for len(p) > 0 {
		if len(c.cur) == cap(c.cur) {
			if c.cur != nil {
				c.full = append(c.full, c.cur)
			}
			c.cur = make([]byte, 0, max(min(max(c.n, 512), chunkSize), len(p)))
		}
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur = c.cur[:len(c.cur)+k]
		p = p[k:]
	}
}

// Bytes returns everything written, in one slice (which the buffer keeps
// as its only chunk).
func (c *chunks) Bytes() []byte {
	if len(c.full) == 0 {
		return c.cur
	}
	out := make([]byte, 0, c.n)
	for _, b := range c.full {
		out = append(out, b...)
	}
	out = append(out, c.cur...)
	c.full, c.cur = nil, out
	return out
}

// NewWriter returns an in-memory trace writer.
func NewWriter() *Writer {
	w := &Writer{}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	return w
}

// Write appends one record.
func (w *Writer) Write(rec any) error {
	switch s := rec.(type) {
	case *Step:
		if s == nil {
			break
		}
		w.line = appendStep(w.line[:0], s)
		w.buf.add(w.line)
		return nil
	case Step:
		w.line = appendStep(w.line[:0], &s)
		w.buf.add(w.line)
		return nil
	}
	return w.enc.Encode(rec)
}

// Bytes returns the trace so far.
func (w *Writer) Bytes() []byte { return w.buf.Bytes() }

// Hash returns "sha256:<hex>" of data.
func Hash(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Read decodes a trace.
func Read(r io.Reader) (*Trace, error) {
	t := &Trace{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		dec := func(v any) error {
			d := json.NewDecoder(bytes.NewReader(raw))
			d.DisallowUnknownFields()
			if err := d.Decode(v); err != nil {
				return fmt.Errorf("line %d (%s): %w", line, probe.Type, err)
			}
			return nil
		}
		switch probe.Type {
		case "header":
			if err := dec(&t.Header); err != nil {
				return nil, err
			}
			if t.Header.Schema != Schema {
				return nil, fmt.Errorf("line %d: trace schema %d, this engine reads %d", line, t.Header.Schema, Schema)
			}
		case "step":
			var s Step
			if err := dec(&s); err != nil {
				return nil, err
			}
			t.Steps = append(t.Steps, s)
			t.Lines = append(t.Lines, s)
		case "action":
			var a Action
			if err := dec(&a); err != nil {
				return nil, err
			}
			t.Actions = append(t.Actions, a)
			t.Lines = append(t.Lines, a)
		case "note":
			var n Note
			if err := dec(&n); err != nil {
				return nil, err
			}
			t.Notes = append(t.Notes, n)
			t.Lines = append(t.Lines, n)
		case "records":
			var rec Records
			if err := dec(&rec); err != nil {
				return nil, err
			}
			t.Records = &rec.Records
		case "final":
			var f Final
			if err := dec(&f); err != nil {
				return nil, err
			}
			t.Final = &f
		default:
			return nil, fmt.Errorf("line %d: unknown record type %q", line, probe.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.Header.Type != "header" {
		return nil, fmt.Errorf("trace has no header")
	}
	return t, nil
}

// ReadFile decodes the trace at path.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func slicesSort(s []string) { slices.Sort(s) }

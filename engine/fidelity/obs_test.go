package fidelity

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fact is one normalised, comparable observation: never a raw resourceVersion,
// uid or timestamp, only relations between them and values the API defines.
type Fact struct {
	K string `json:"k"`
	V string `json:"v"`
}

// Observation is what one case saw, in order.
type Observation struct {
	Facts []Fact `json:"facts"`
	// Notes are kept for the report but never compared (error messages).
	Notes []Fact `json:"notes,omitempty"`
	rvs   map[string]string
	last  string
}

func newObs() *Observation { return &Observation{rvs: map[string]string{}} }

// Add records a fact; values are rendered with render.
func (o *Observation) Add(k string, v any) { o.Facts = append(o.Facts, Fact{K: k, V: render(v)}) }

// Err records a returned error (nil, or apierrors reason/HTTP code) and reports whether it was nil.
func (o *Observation) Err(k string, err error) bool {
	o.Add(k+".err", errStr(err))
	if err != nil {
		o.Notes = append(o.Notes, Fact{K: k + ".err", V: err.Error()})
	}
	if d := errCauses(err); d != "" {
		o.Add(k+".causes", d)
	}
	return err == nil
}

// RV records how obj's resourceVersion relates to the previously noted one
// ("first", "same", "newer", "older", "empty") and remembers it under label.
func (o *Observation) RV(label string, obj metav1.Object) {
	o.RVString(label, obj.GetResourceVersion())
}

func (o *Observation) RVString(label, rv string) {
	o.Add("rv."+label, rvRelation(o.last, rv))
	if rv != "" {
		o.last = rv
		o.rvs[label] = rv
	}
}

// RVNotOlder records whether rv is at least the last resourceVersion seen,
// without telling "same" from "newer". A list's resourceVersion is the
// store's revision at the time of the list: on the real server, writers this
// case does not control (the apiserver's own lease, the kubernetes Service's
// endpoints reconciler) may advance it between the case's last write and its
// list, so "same" versus "newer" is timing, not semantics. What both servers
// promise is that the list is not older than a write that returned before it.
func (o *Observation) RVNotOlder(label, rv string) {
	rel := rvRelation(o.last, rv)
	if rel == "same" || rel == "newer" {
		rel = "notOlder"
	}
	o.Add("rv."+label, rel)
	if rv != "" {
		o.last = rv
		o.rvs[label] = rv
	}
}

// RVvs compares the remembered resourceVersions a and b (b relative to a).
func (o *Observation) RVvs(a, b string) {
	o.Add("rv."+b+"-vs-"+a, rvRelation(o.rvs[a], o.rvs[b]))
}

func rvRelation(prev, cur string) string {
	switch {
	case cur == "":
		return "empty"
	case prev == "":
		return "first"
	case prev == cur:
		return "same"
	}
	p, err1 := strconv.ParseUint(prev, 10, 64)
	c, err2 := strconv.ParseUint(cur, 10, 64)
	if err1 != nil || err2 != nil {
		return "changed(non-numeric)"
	}
	if c > p {
		return "newer"
	}
	return "older"
}

// Meta records the normalised metadata of obj under prefix.
func (o *Observation) Meta(prefix string, obj metav1.Object) {
	o.Add(prefix+".generation", obj.GetGeneration())
	o.Add(prefix+".deletionTimestamp", !isZeroTime(obj.GetDeletionTimestamp()))
	if obj.GetDeletionGracePeriodSeconds() != nil {
		o.Add(prefix+".deletionGracePeriodSeconds", *obj.GetDeletionGracePeriodSeconds())
	}
	o.Add(prefix+".finalizers", obj.GetFinalizers())
	o.Add(prefix+".managedFields", normManagedFields(obj.GetManagedFields()))
}

func isZeroTime(t *metav1.Time) bool { return t == nil || t.IsZero() }

// MF records only the managed fields.
func (o *Observation) MF(prefix string, obj metav1.Object) {
	o.Add(prefix+".managedFields", normManagedFields(obj.GetManagedFields()))
}

type normMF struct {
	Manager     string          `json:"manager"`
	Operation   string          `json:"operation"`
	Subresource string          `json:"subresource,omitempty"`
	APIVersion  string          `json:"apiVersion"`
	FieldsType  string          `json:"fieldsType"`
	FieldsV1    json.RawMessage `json:"fieldsV1,omitempty"`
	HasTime     bool            `json:"time"`
}

func normManagedFields(mfs []metav1.ManagedFieldsEntry) []normMF {
	out := []normMF{}
	for _, m := range mfs {
		n := normMF{Manager: m.Manager, Operation: string(m.Operation), Subresource: m.Subresource,
			APIVersion: m.APIVersion, FieldsType: m.FieldsType, HasTime: m.Time != nil}
		if m.FieldsV1 != nil {
			var v any
			if err := json.Unmarshal(m.FieldsV1.Raw, &v); err == nil {
				b, _ := json.Marshal(v) // canonical: sorted keys
				n.FieldsV1 = b
			} else {
				n.FieldsV1 = json.RawMessage(strconv.Quote(string(m.FieldsV1.Raw)))
			}
		}
		out = append(out, n)
	}
	// the API keeps entries in an order that is not part of its contract; compare as a set.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Manager != b.Manager {
			return a.Manager < b.Manager
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		return a.Subresource < b.Subresource
	})
	return out
}

func errStr(err error) string {
	if err == nil {
		return "nil"
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		r := string(s.Reason)
		if r == "" {
			r = "<no reason>"
		}
		return fmt.Sprintf("%s/%d", r, s.Code)
	}
	if meta.IsNoMatchError(err) {
		return "client:NoKindMatch"
	}
	return "client-error"
}

// errCauses renders the status causes: for conflicts (SSA) type, field and
// message; for everything else type and field only (wording differs).
func errCauses(err error) string {
	var st apierrors.APIStatus
	if err == nil || !errors.As(err, &st) {
		return ""
	}
	s := st.Status()
	if s.Details == nil || len(s.Details.Causes) == 0 {
		return ""
	}
	var cs []string
	for _, c := range s.Details.Causes {
		if s.Reason == metav1.StatusReasonConflict {
			cs = append(cs, fmt.Sprintf("%s %s %s", c.Type, c.Field, c.Message))
		} else {
			cs = append(cs, fmt.Sprintf("%s %s", c.Type, c.Field))
		}
	}
	sort.Strings(cs)
	// kube-apiserver sometimes reports the same cause twice (object-meta
	// validation runs in both the generic registry and the strategy); the
	// set of causes is what a client can rely on.
	cs = slicesCompact(cs)
	return strings.Join(cs, "; ")
}

func slicesCompact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// MetaNoMF is Meta without managed fields (for built-ins, whose managed
// fields also list the fields built-in defaulting filled in).
func (o *Observation) MetaNoMF(prefix string, obj metav1.Object) {
	o.Add(prefix+".generation", obj.GetGeneration())
	o.Add(prefix+".deletionTimestamp", !isZeroTime(obj.GetDeletionTimestamp()))
	if obj.GetDeletionGracePeriodSeconds() != nil {
		o.Add(prefix+".deletionGracePeriodSeconds", *obj.GetDeletionGracePeriodSeconds())
	}
	o.Add(prefix+".finalizers", obj.GetFinalizers())
}

// MFOf records the managed-fields entries of the given managers only.
func (o *Observation) MFOf(prefix string, obj metav1.Object, managers ...string) {
	var keep []metav1.ManagedFieldsEntry
	for _, m := range obj.GetManagedFields() {
		for _, want := range managers {
			if m.Manager == want {
				keep = append(keep, m)
			}
		}
	}
	o.Add(prefix+".managedFields", normManagedFields(keep))
}

func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		return errStr(x)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("!marshal(%v)", err)
	}
	return string(b)
}

// field fetches a nested value from an object (typed objects are converted).
func field(obj runtime.Object, path ...string) any {
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.Object
	} else {
		var err error
		m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return "!convert"
		}
	}
	v, found, err := unstructured.NestedFieldNoCopy(m, path...)
	if err != nil {
		return "!" + err.Error()
	}
	if !found {
		return "<absent>"
	}
	return v
}

// compare returns the keys whose values differ (or exist only on one side).
func compare(a, b *Observation) []string {
	am, bm := map[string]string{}, map[string]string{}
	var order []string
	for _, f := range a.Facts {
		if _, ok := am[f.K]; !ok {
			order = append(order, f.K)
		}
		am[f.K] = f.V
	}
	for _, f := range b.Facts {
		if _, ok := am[f.K]; !ok {
			if _, ok2 := bm[f.K]; !ok2 {
				order = append(order, f.K)
			}
		}
		bm[f.K] = f.V
	}
	var diff []string
	for _, k := range order {
		av, aok := am[k]
		bv, bok := bm[k]
		if aok != bok || av != bv {
			diff = append(diff, k)
		}
	}
	return diff
}

func (o *Observation) note(k string) string {
	for i := len(o.Notes) - 1; i >= 0; i-- {
		if o.Notes[i].K == k {
			return o.Notes[i].V
		}
	}
	return ""
}

// show renders a fact's value with its note (the error message), if any.
func (o *Observation) show(k string) string {
	v, ok := o.get(k)
	if !ok {
		v = "<missing>"
	}
	if n := o.note(k); n != "" {
		if len(n) > 300 {
			n = n[:300] + "..."
		}
		v += "  (" + n + ")"
	}
	return v
}

func (o *Observation) get(k string) (string, bool) {
	for i := len(o.Facts) - 1; i >= 0; i-- {
		if o.Facts[i].K == k {
			return o.Facts[i].V, true
		}
	}
	return "", false
}

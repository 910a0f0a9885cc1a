package apiserver_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kubernetes/pkg/apis/core"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestShiftTimes pins what ReadingAt's Tables move (ShiftTimes): every
// metav1.Time and MicroTime of a typed object, through pointers, slices
// and nested structs, a zero one left zero; every RFC 3339 string of an
// unstructured one, other strings left alone.
func TestShiftTimes(t *testing.T) {
	at := time.Date(2000, 1, 1, 0, 0, 10, 0, time.UTC)
	d := time.Hour
	ev := &core.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e", CreationTimestamp: metav1.NewTime(at)},
		FirstTimestamp: metav1.NewTime(at),
		EventTime:      metav1.NewMicroTime(at),
		Series:         &core.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(at)},
	}
	pod := &core.Pod{Status: core.PodStatus{Conditions: []core.PodCondition{{Type: core.PodReady, LastTransitionTime: metav1.NewTime(at)}}}}
	apiserver.ShiftTimes(ev, d)
	apiserver.ShiftTimes(pod, d)
	want := at.Add(d)
	for name, got := range map[string]time.Time{
		"creationTimestamp":       ev.CreationTimestamp.Time,
		"firstTimestamp":          ev.FirstTimestamp.Time,
		"eventTime":               ev.EventTime.Time,
		"series.lastObservedTime": ev.Series.LastObservedTime.Time,
		"pod condition":           pod.Status.Conditions[0].LastTransitionTime.Time,
	} {
		if !got.Equal(want) {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if !ev.LastTimestamp.IsZero() {
		t.Errorf("a zero lastTimestamp became %s", ev.LastTimestamp)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"creationTimestamp": "2000-01-01T00:00:10Z", "name": "2000-01-01"},
		"status":   map[string]any{"conditions": []any{map[string]any{"lastTransitionTime": "2000-01-01T00:00:10.000000Z"}}},
	}}
	apiserver.ShiftTimes(u, d)
	if got, _, _ := unstructured.NestedString(u.Object, "metadata", "creationTimestamp"); got != "2000-01-01T01:00:10Z" {
		t.Errorf("creationTimestamp %q", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "metadata", "name"); got != "2000-01-01" {
		t.Errorf("a name that is no timestamp became %q", got)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if got := conds[0].(map[string]any)["lastTransitionTime"]; got != "2000-01-01T01:00:10.000000Z" {
		t.Errorf("a MicroTime string became %q", got)
	}
}

package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Events as client-go's recorder writes them (core/v1, count 1, first and
// last timestamps, source.component): kube's Event strategy validates them
// (pkg/registry/core/event) and its GetAttrs gives the fields a list
// selects on (involvedObject.*, reason, source, type), which kubectl
// describe's Events section and kubectl events ask for.

func recorderEvent(ns, name, object, reason, typ string) *corev1.Event {
	ts := metav1.Now()
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: ns, Name: object, UID: types.UID("u-" + object)},
		Reason:         reason, Message: reason + " " + object, Type: typ,
		Source:         corev1.EventSource{Component: "fidelity-controller"},
		FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
	}
}

var _ = register("event/create-and-field-selectors", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, e := range []*corev1.Event{
		recorderEvent(ns, "a.1", "a", "Synced", corev1.EventTypeNormal),
		recorderEvent(ns, "a.2", "a", "Failed", corev1.EventTypeWarning),
		recorderEvent(ns, "b.1", "b", "Synced", corev1.EventTypeNormal),
	} {
		o.Err("create "+e.Name, c.Create(ctx, e))
	}
	for _, q := range []struct {
		name string
		sel  client.MatchingFields
	}{
		{"name", client.MatchingFields{"involvedObject.name": "a"}},
		{"describe's", client.MatchingFields{"involvedObject.name": "a", "involvedObject.kind": "ConfigMap", "involvedObject.uid": "u-a", "involvedObject.namespace": ns}},
		{"reason", client.MatchingFields{"reason": "Synced"}},
		{"type", client.MatchingFields{"type": "Warning"}},
		{"source", client.MatchingFields{"source": "fidelity-controller"}},
		{"other kind", client.MatchingFields{"involvedObject.kind": "Pod"}},
	} {
		l := &corev1.EventList{}
		key := "list by " + q.name
		if err := c.List(ctx, l, client.InNamespace(ns), q.sel); err != nil {
			o.Err(key, err)
			continue
		}
		var names []string
		for _, e := range l.Items {
			names = append(names, e.Name)
		}
		o.Add(key, namesOf(names, true))
	}
	l := &corev1.EventList{}
	o.Err("list unsupported field", c.List(ctx, l, client.InNamespace(ns), client.MatchingFields{"message": "x"}))
})

var _ = register("event/invalid", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	e := recorderEvent(ns, "x.1", "x", "Synced", corev1.EventTypeNormal)
	e.InvolvedObject.Namespace = "elsewhere"
	o.Err("involvedObject in another namespace", c.Create(ctx, e))
	e = recorderEvent(ns, "x.2", "x", "Synced", "Bogus")
	o.Err("unknown type", c.Create(ctx, e))
	e = recorderEvent(ns, "x.3", "x", "", corev1.EventTypeNormal)
	e.Reason = ""
	o.Err("no reason", c.Create(ctx, e))
})

// Field selectors through the registries' GetAttrs: Node's linked, the
// Namespace's run although its write strategy is not (apiserver/strategy.go
// unlinkedAttrs).
var _ = register("node/list-field-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	mustOK(o, "create node", c.Create(ctx, n))
	defer func() { _ = c.Delete(ctx, n) }()
	l := &corev1.NodeList{}
	o.Err("list spec.unschedulable", c.List(ctx, l, client.MatchingFields{"spec.unschedulable": "true", "metadata.name": n.Name}))
	var names []string
	for _, i := range l.Items {
		names = append(names, i.Name)
	}
	o.Add("unschedulable", namesOf(names, true))
	l = &corev1.NodeList{}
	o.Err("list spec.unschedulable=false", c.List(ctx, l, client.MatchingFields{"spec.unschedulable": "false", "metadata.name": n.Name}))
	o.Add("schedulable", len(l.Items))
	pl := &corev1.PersistentVolumeClaimList{}
	o.Err("list pvc by name", c.List(ctx, pl, client.InNamespace(ns), client.MatchingFields{"metadata.name": "none"}))
	o.Err("list pvc by bogus field", c.List(ctx, pl, client.InNamespace(ns), client.MatchingFields{"spec.volumeName": "x"}))
})

package fidelity

import (
	"context"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const own = client.FieldOwner(fieldOwner)

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func newU(gvk schema.GroupVersionKind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func emptyU(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u
}

func emptyUList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

func getU(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := emptyU(gvk)
	err := c.Get(ctx, key(ns, name), u)
	return u, err
}

func getCM(ctx context.Context, c client.Client, ns, name string) (*corev1.ConfigMap, error) {
	o := &corev1.ConfigMap{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

func getDeploy(ctx context.Context, c client.Client, ns, name string) (*appsv1.Deployment, error) {
	o := &appsv1.Deployment{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

func deploy(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}},
			},
		},
	}
}

func containerNames(d *appsv1.Deployment) string {
	var n []string
	for _, c := range d.Spec.Template.Spec.Containers {
		n = append(n, c.Name+"="+c.Image)
	}
	return strings.Join(n, ",")
}

// names lists object names, sorted unless keepOrder.
func namesOf(objs []string, keepOrder bool) []string {
	out := append([]string{}, objs...)
	if !keepOrder {
		sort.Strings(out)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func cmNames(l *corev1.ConfigMapList) []string {
	var n []string
	for _, i := range l.Items {
		n = append(n, i.Namespace+"/"+i.Name)
	}
	return n
}

func uNames(l *unstructured.UnstructuredList) []string {
	var n []string
	for _, i := range l.Items {
		n = append(n, i.GetNamespace()+"/"+i.GetName())
	}
	return n
}

// mustOK is for setup steps: it records the error and reports success.
func mustOK(o *Observation, step string, err error) bool { return o.Err(step, err) }

func mustFieldSelector(s string) fields.Selector { return fields.ParseSelectorOrDie(s) }

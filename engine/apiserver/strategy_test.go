package apiserver_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// The linked registry strategies and the storage rules restated around
// them (linked.go, service.go, read.go); each is pinned against a real
// kube-apiserver by the fidelity case named.
func TestLinkedRegistry(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, ctx context.Context, c client.Client)
	}{
		{"deployment defaults and Recreate with rollingUpdate (deploy/strategy-recreate-with-rolling-update)", func(t *testing.T, ctx context.Context, c client.Client) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: tmpl}}
			must(t, c.Create(ctx, d))
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.RollingUpdate == nil {
				t.Fatalf("defaults: replicas=%v strategy=%+v", d.Spec.Replicas, d.Spec.Strategy)
			}
			err := c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"strategy":{"type":"Recreate"}}}`)))
			if !apierrors.IsInvalid(err) {
				t.Fatalf("Recreate keeping rollingUpdate: %v, want 422", err)
			}
			must(t, c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":null}}`))))
			if *d.Spec.Replicas != 1 {
				t.Fatalf("replicas null -> %d, want 1", *d.Spec.Replicas)
			}
		}},
		{"job selector, labels and immutable template (job/create-selector-and-labels, job/template-immutable)", func(t *testing.T, ctx context.Context, c client.Client) {
			jt := tmpl
			jt.Labels = nil
			jt.Spec.RestartPolicy = corev1.RestartPolicyNever
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "j"}, Spec: batchv1.JobSpec{Template: jt}}
			must(t, c.Create(ctx, j))
			if j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != string(j.UID) || j.Labels[batchv1.JobNameLabel] != "j" {
				t.Fatalf("selector=%v labels=%v uid=%s", j.Spec.Selector, j.Labels, j.UID)
			}
			j.Spec.Template.Spec.Containers[0].Image = "example.invalid/main:2"
			if err := c.Update(ctx, j); !apierrors.IsInvalid(err) {
				t.Fatalf("template change: %v, want 422", err)
			}
		}},
		{"service allocation and immutable clusterIP (svc/*)", func(t *testing.T, ctx context.Context, c client.Client) {
			mk := func(name string) *corev1.Service {
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Type: corev1.ServiceTypeNodePort}}
			}
			a, b := mk("a"), mk("b")
			must(t, c.Create(ctx, a))
			must(t, c.Create(ctx, b))
			if a.Spec.ClusterIP != "10.0.0.2" || b.Spec.ClusterIP != "10.0.0.3" || a.Spec.Ports[0].NodePort != 30000 || b.Spec.Ports[0].NodePort != 30001 {
				t.Fatalf("allocated %s:%d and %s:%d", a.Spec.ClusterIP, a.Spec.Ports[0].NodePort, b.Spec.ClusterIP, b.Spec.Ports[0].NodePort)
			}
			fresh := mk("a")
			must(t, c.Update(ctx, fresh))
			if fresh.Spec.ClusterIP != a.Spec.ClusterIP || fresh.Spec.Ports[0].NodePort != a.Spec.Ports[0].NodePort || fresh.ResourceVersion != a.ResourceVersion {
				t.Fatalf("update without allocated values: %+v rv %s -> %s", fresh.Spec, a.ResourceVersion, fresh.ResourceVersion)
			}
			fresh.Spec.ClusterIP, fresh.Spec.ClusterIPs = "10.0.9.9", []string{"10.0.9.9"}
			if err := c.Update(ctx, fresh); !apierrors.IsInvalid(err) {
				t.Fatalf("clusterIP change: %v, want 422", err)
			}
			dup := mk("c")
			dup.Spec.ClusterIP = a.Spec.ClusterIP
			if err := c.Create(ctx, dup); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
				t.Fatalf("taken IP: %v", err)
			}
		}},
		{"generateName retried on a taken name (cm/generate-name)", func(t *testing.T, ctx context.Context, c client.Client) {
			first := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "g-"}}
			must(t, c.Create(ctx, first))
			// The next generated name, taken in advance by another object in
			// a fresh server that repeats the sequence.
			_, c2 := newServer(t, apiserver.Ablations{})
			probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "g-"}}
			must(t, c2.Create(ctx, probe))
			probe2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "g-"}}
			must(t, c2.Create(ctx, probe2))
			must(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: probe2.Name}}))
			again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "g-"}}
			must(t, c.Create(ctx, again))
			if again.Name == probe2.Name || !strings.HasPrefix(again.Name, "g-") {
				t.Fatalf("generated %q, taken %q", again.Name, probe2.Name)
			}
		}},
		{"lease update without resourceVersion is 422 (lease/update-without-rv)", func(t *testing.T, ctx context.Context, c client.Client) {
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "l"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a")}}
			must(t, c.Create(ctx, l))
			l2 := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "l"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("b")}}
			if err := c.Update(ctx, l2); !apierrors.IsInvalid(err) {
				t.Fatalf("update without rv: %v, want 422", err)
			}
		}},
		{"selector page continues while keys remain; exact resourceVersion list (list/*)", func(t *testing.T, ctx context.Context, c client.Client) {
			for _, n := range []string{"a", "b", "c"} {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: n}}
				if n == "a" {
					cm.Labels = map[string]string{"x": "y"}
				}
				must(t, c.Create(ctx, cm))
			}
			l := &corev1.ConfigMapList{}
			must(t, c.List(ctx, l, client.InNamespace("default"), client.MatchingLabels{"x": "y"}, client.Limit(1)))
			if len(l.Items) != 1 || l.Continue == "" {
				t.Fatalf("page: %d items, continue %q", len(l.Items), l.Continue)
			}
			rv := l.ResourceVersion
			must(t, c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}))
			at := &corev1.ConfigMapList{}
			must(t, c.List(ctx, at, client.InNamespace("default"), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}}))
			if len(at.Items) != 3 || at.ResourceVersion != rv {
				t.Fatalf("exact list at %s: %d items, rv %s", rv, len(at.Items), at.ResourceVersion)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newServer(t, apiserver.Ablations{})
			tc.run(t, t.Context(), c)
		})
	}
}

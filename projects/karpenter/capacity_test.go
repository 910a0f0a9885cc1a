package karpenter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

func TestWithoutExhaustedCapacity(t *testing.T) {
	nc := func(annotation string, types ...string) *karpv1.NodeClaim {
		c := &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc"}}
		if annotation != "" {
			c.Annotations = map[string]string{InsufficientCapacityAnnotation: annotation}
		}
		if types != nil {
			c.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: types},
			}
		}
		return c
	}
	for _, tc := range []struct {
		name string
		in   *karpv1.NodeClaim
		ice  bool
		want []string // instance types left; nil: unchanged
	}{
		{name: "no annotation", in: nc("", "a", "b")},
		{name: "names none", in: nc("c", "a", "b")},
		{name: "names one of two", in: nc("a", "a", "b"), want: []string{"b"}},
		{name: "names all", in: nc("b, a", "a", "b"), ice: true},
		{name: "star", in: nc("*", "a"), ice: true},
		{name: "no instance type requirement", in: nc("a"), ice: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			out, err := withoutExhaustedCapacity(tc.in)
			if tc.ice {
				if !cloudprovider.IsInsufficientCapacityError(err) {
					t.Fatalf("err = %v, want an insufficient capacity error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if out != tc.in {
					t.Fatal("want the NodeClaim passed through unchanged")
				}
				return
			}
			if got := out.Spec.Requirements[1].Values; len(got) != len(tc.want) || got[0] != tc.want[0] {
				t.Fatalf("instance types = %v, want %v", got, tc.want)
			}
			if tc.in.Spec.Requirements[1].Values[0] != before.Spec.Requirements[1].Values[0] {
				t.Fatal("the caller's NodeClaim was changed")
			}
		})
	}
}

package oracle

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func BenchmarkCompileCEL(b *testing.B) {
	for b.Loop() {
		if _, err := CompileCEL(bucketObserved); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	p, err := CompileCEL(bucketObserved)
	if err != nil {
		b.Fatal(err)
	}
	objs := []*unstructured.Unstructured{bucket(2, 2)}
	for i := range 50 {
		objs = append(objs, obj("v1", "ConfigMap", "default", string(rune('a'+i)), nil))
	}
	s := State{Objects: objs}
	for b.Loop() {
		if _, err := p.Eval(s); err != nil {
			b.Fatal(err)
		}
	}
}

package oracle_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/oracle"
)

// A CEL oracle judges a state; its verdict says what held or failed.
func ExampleCheckFinal() {
	p, err := oracle.CompileCEL(`object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '2'`)
	if err != nil {
		fmt.Println(err)
		return
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": "counter"}, "data": map[string]any{"count": "1"}}}
	v := oracle.CheckFinal(p, oracle.State{Objects: []*unstructured.Unstructured{cm}, Step: 7}).Named("counted-twice")
	fmt.Println(v.Failed())
	// Output:
	// true
}

package ctrlsim

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// IndexField implements client.FieldIndexer.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	gvk, err := apiutil.GVKForObject(obj, c.client.env.Scheme)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.indexes[gvk.GroupKind()]
	if m == nil {
		m = map[string]client.IndexerFunc{}
		c.indexes[gvk.GroupKind()] = m
	}
	if _, dup := m[field]; dup {
		return fmt.Errorf("indexer conflict: map[field:%s:{}]", field)
	}
	m[field] = extract
	c.mu.Unlock()
	c.informer(gvk, formOf(obj))
	c.mu.Lock()
	return nil
}

func (c *Cache) checkIndexed(gvk schema.GroupVersionKind, sel fields.Selector) error {
	for _, r := range sel.Requirements() {
		if r.Operator != "=" && r.Operator != "==" {
			return fmt.Errorf("non-exact field matches are not supported by the cache")
		}
		if _, ok := c.indexes[gvk.GroupKind()][r.Field]; !ok {
			return fmt.Errorf("Index with name field:%s does not exist", r.Field)
		}
	}
	return nil
}

// filterIndexed keeps the objects whose indexed values match every
// requirement, evaluating upstream's extractor on the typed object.
func (c *Cache) filterIndexed(gvk schema.GroupVersionKind, items []*unstructured.Unstructured, sel fields.Selector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, it := range items {
		obj, err := c.client.env.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if err := replaceWith(it, obj, gvk); err != nil {
			return nil, err
		}
		ok := true
		for _, r := range sel.Requirements() {
			vals := c.indexes[gvk.GroupKind()][r.Field](obj.(client.Object))
			if !slices.Contains(vals, r.Value) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}

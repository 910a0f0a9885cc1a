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

// IndexField implements client.FieldIndexer. As in controller-runtime's
// informer cache, the index belongs to the informer of obj's form (typed,
// unstructured or metadata: cache.New keeps one informer per form), which
// it starts: a List in that form can match on it, and its extractor gets
// the objects that informer holds (transformed, as client-go indexes them
// after the transform).
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if c.up != nil {
		return c.up.IndexField(ctx, obj, field, extract)
	}
	gvk, err := apiutil.GVKForObject(obj, c.client.env.Scheme)
	if err != nil {
		return err
	}
	inf := c.informer(gvk, formOf(obj))
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf.fieldIndexes == nil {
		inf.fieldIndexes = map[string]client.IndexerFunc{}
	}
	if _, dup := inf.fieldIndexes[field]; dup {
		return fmt.Errorf("indexer conflict: map[field:%s:{}]", field)
	}
	inf.fieldIndexes[field] = extract
	return nil
}

// indexedInformer returns the informer of gvk in form f that a cached List
// with the field selector sel reads, after checking that it has an index
// for every field sel names (controller-runtime's errors otherwise).
func (c *Cache) indexedInformer(gvk schema.GroupVersionKind, f Form, sel fields.Selector) (*Informer, error) {
	c.mu.Lock()
	inf := c.informers[informerKey{gvk, f}]
	c.mu.Unlock()
	for _, r := range sel.Requirements() {
		if r.Operator != "=" && r.Operator != "==" {
			return nil, fmt.Errorf("non-exact field matches are not supported by the cache")
		}
		if inf == nil || inf.fieldIndexes[r.Field] == nil {
			return nil, fmt.Errorf("Index with name field:%s does not exist", r.Field)
		}
	}
	return inf, nil
}

// filterIndexed keeps the objects whose indexed values match every
// requirement of sel, evaluating upstream's extractors on each object as
// inf holds it.
func (inf *Informer) filterIndexed(items []*unstructured.Unstructured, sel fields.Selector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, it := range items {
		obj, err := inf.convert(it)
		if err != nil {
			return nil, err
		}
		co, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index of %s: %T is not a client.Object", inf.GVK.Kind, obj)
		}
		match := true
		for _, r := range sel.Requirements() {
			if !slices.Contains(inf.fieldIndexes[r.Field](co), r.Value) {
				match = false
				break
			}
		}
		if match {
			out = append(out, it)
		}
	}
	return out, nil
}

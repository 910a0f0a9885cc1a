package apiserver

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
)

// tableNowKey is the context key of the time ReadingAt's Tables are at.
type tableNowKey struct{}

// ReadingAt returns a context under which a read through the handler front
// (FrontHandler) is the one kube-apiserver answered when the store was at
// revision rev and the virtual clock at now: kube's storage reads the
// store as it was at rev (etcdkv.ReadAt; a write under it is refused), a
// resourceVersion newer than rev is too new (freshness), and a Table's
// ages are measured at now rather than at the wall clock kube's printers
// and apiextensions' tableconvertor read (time.Now; see clockedTable).
// make inspect serves a recorded step this way, through the handlers and
// storage the REST seam serves the present with.
func ReadingAt(ctx context.Context, rev int64, now time.Time) context.Context {
	return WithTableClock(etcdkv.ReadAt(ctx, rev), func() time.Time { return now })
}

// WithTableClock returns a context under which a Table the handler front
// converts to measures its ages at the time now returns then (see
// ReadingAt): a watch that make inspect serves across steps gives each
// step's events that step's time.
func WithTableClock(ctx context.Context, now func() time.Time) context.Context {
	return context.WithValue(ctx, tableNowKey{}, now)
}

// clockedTable is a kind's Table convertor (kube's: the registry Store's
// printers, or the CRD's printer columns) under a context with
// ReadingAt's time: upstream's convertor measures ages from time.Now, a
// clock it takes no seam for, so it is given a copy of the object whose
// timestamps are moved by (wall clock − the virtual now), and the rows get
// the objects as stored back. The ages are those at the virtual now: the
// printers round ages down, and the wall clock only moves on between the
// shift and their reading (by less than the second the now is floored
// to). Without the time it is the convertor itself.
type clockedTable struct{ rest.TableConvertor }

func (c clockedTable) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	clock, ok := ctx.Value(tableNowKey{}).(func() time.Time)
	if !ok {
		return c.TableConvertor.ConvertToTable(ctx, obj, opts)
	}
	// Whole seconds: the printers floor an age to the second, and the
	// timestamps they read are whole seconds (metav1.Time), so flooring
	// the virtual now prints the same ages and leaves a second of wall
	// clock between the shift and the printers' reading (a loaded machine
	// printed 1s for an age of 0.95s).
	now := clock().Truncate(time.Second)
	shifted := obj.DeepCopyObject()
	stored := map[runtime.Object]runtime.Object{shifted: obj}
	if meta.IsListType(obj) {
		var orig, copies []runtime.Object
		if err := meta.EachListItem(obj, func(o runtime.Object) error { orig = append(orig, o); return nil }); err != nil {
			return nil, err
		}
		if err := meta.EachListItem(shifted, func(o runtime.Object) error { copies = append(copies, o); return nil }); err != nil {
			return nil, err
		}
		for i := range copies {
			stored[copies[i]] = orig[i]
		}
	}
	ShiftTimes(shifted, time.Since(now))
	t, err := c.TableConvertor.ConvertToTable(ctx, shifted, opts)
	if err != nil {
		return nil, err
	}
	for i := range t.Rows {
		o := t.Rows[i].Object.Object
		if o == nil {
			continue
		}
		s, found := stored[o]
		if !found {
			return nil, fmt.Errorf("apiserver: a Table row of %T holds an object that is not one of those converted (%T): its ages cannot be moved back", obj, o)
		}
		t.Rows[i].Object.Object = s
	}
	return t, nil
}

// ShiftTimes moves every timestamp in obj by d: metav1.Time and
// metav1.MicroTime values of a typed object (a zero one stays zero:
// printers show it as unknown), and every RFC 3339 string of an
// unstructured one (its content is JSON, where a time is such a string).
func ShiftTimes(obj runtime.Object, d time.Duration) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		shiftJSONTimes(o.Object, d)
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			shiftJSONTimes(o.Items[i].Object, d)
		}
	default:
		shiftTyped(reflect.ValueOf(obj), d)
	}
}

var (
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
)

// shiftTyped moves the metav1.Time and MicroTime values under v by d,
// through pointers, exported struct fields, slices, arrays and map values.
func shiftTyped(v reflect.Value, d time.Duration) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			shiftTyped(v.Elem(), d)
		}
	case reflect.Struct:
		switch {
		case v.Type() == timeType && v.CanSet():
			if t := v.Interface().(metav1.Time); !t.IsZero() {
				v.Set(reflect.ValueOf(metav1.NewTime(t.Add(d))))
			}
		case v.Type() == microTimeType && v.CanSet():
			if t := v.Interface().(metav1.MicroTime); !t.IsZero() {
				v.Set(reflect.ValueOf(metav1.NewMicroTime(t.Add(d))))
			}
		default:
			for i := range v.NumField() {
				if f := v.Field(i); f.CanSet() {
					shiftTyped(f, d)
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			shiftTyped(v.Index(i), d)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			shiftTyped(e, d)
			v.SetMapIndex(k, e)
		}
	}
}

// shiftJSONTimes moves every RFC 3339 timestamp in v (JSON content:
// metav1.Time and MicroTime values as they are encoded) by d.
func shiftJSONTimes(v map[string]any, d time.Duration) {
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for key, e := range x {
				x[key] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			for _, layout := range []string{time.RFC3339, metav1.RFC3339Micro} {
				if ts, err := time.Parse(layout, x); err == nil && ts.Format(layout) == x {
					return ts.Add(d).UTC().Format(layout)
				}
			}
		}
		return x
	}
	walk(v)
}

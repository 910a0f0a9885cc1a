package inspect

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// builtinTables is the Table convertor kube-apiserver's registries give
// the built-in kinds (e.g. pkg/registry/core/pod/storage:
// printerstorage.TableConvertor over printersinternal.AddHandlers).
var builtinTables = printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}

// builtinTable renders objs (of built-in kind k, read from srv) with kube's
// own printers, so that `kubectl get pods` shows READY, STATUS, RESTARTS,
// `kubectl get events` LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and so
// on. ok is false when kube has no printer for the kind.
//
// kube's printers measure ages from the wall clock (time.Now); the state
// served is at the step's virtual time at. So that the ages are those at
// the step, the printers are given copies whose timestamps are moved by
// (wall clock − at); the rows keep the objects as stored.
func builtinTable(srv *apiserver.Server, k *apiserver.Kind, objs []*unstructured.Unstructured, isList bool, opts *metav1.TableOptions, at time.Time) (t *metav1.Table, ok bool, err error) {
	if !legacyscheme.Scheme.Recognizes(k.GVK) {
		return nil, false, nil // kube's printers know kube-apiserver's own kinds only
	}
	shift := time.Since(at)
	var internal []runtime.Object
	for _, o := range objs {
		c := o.DeepCopy()
		apiserver.ShiftTimes(c, shift)
		in, err := srv.Internal(k, c)
		if err != nil {
			return nil, false, err
		}
		internal = append(internal, in)
	}
	var in runtime.Object
	if isList {
		ig := k.GVK.GroupKind().WithVersion(runtime.APIVersionInternal)
		l, err := legacyscheme.Scheme.New(ig.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err != nil {
			return nil, false, nil
		}
		if err := meta.SetList(l, internal); err != nil {
			return nil, false, nil
		}
		in = l
	} else {
		in = internal[0]
	}
	t, err = builtinTables.ConvertToTable(context.Background(), in, opts)
	if err != nil || len(t.Rows) != len(objs) {
		// No printer for the kind (or rows that do not map to objects):
		// the caller's NAME and AGE.
		return nil, false, nil
	}
	for i := range t.Rows {
		t.Rows[i].Object = runtime.RawExtension{Object: objs[i]}
	}
	return t, true, nil
}

package inspect

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// ageColumn is the column apiextensions' defaulting gives a CRD version
// without additionalPrinterColumns.
var ageColumn = apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}

// table renders objs as a meta.k8s.io/v1 Table, as kube-apiserver's
// handlers do when the client asks for one (kubectl get):
//
//   - a custom resource with apiextensions-apiserver's own tableconvertor
//     over its CRD's additionalPrinterColumns for the served version (or
//     the Age column its defaulting adds);
//   - a built-in kind with kube-apiserver's own printers (printers.go), or
//     NAME and AGE for one they do not know.
//
// Ages (date columns) are measured at the step's virtual time, not the
// wall clock's: the run started at 2000-01-01T00:00:00Z.
// Rows carry the object as includeObject asks (default: its metadata).
// The caller holds mu.
func (s *Server) table(k *apiserver.Kind, objs []*unstructured.Unstructured, isList bool, res *apiserver.ListResult, q map[string][]string, rev int64, headers bool) (*metav1.Table, error) {
	opts := &metav1.TableOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	opts.NoHeaders = opts.NoHeaders || !headers
	at := s.rec.start.Add(s.rec.Time(s.step))
	var in runtime.Object
	if !isList {
		in = objs[0]
	} else {
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": k.GVK.GroupVersion().String(), "kind": k.GVK.Kind + "List"}}
		for _, o := range objs {
			l.Items = append(l.Items, *o)
		}
		l.SetResourceVersion(res.RV)
		l.SetContinue(res.Continue)
		l.SetRemainingItemCount(res.Remaining)
		in = l
	}
	var t *metav1.Table
	if k.CRD {
		cols := []apiextensionsv1.CustomResourceColumnDefinition{ageColumn}
		if crd := s.crdOf(k, rev); crd != nil {
			for _, v := range crd.Spec.Versions {
				if v.Name == k.GVK.Version && len(v.AdditionalPrinterColumns) > 0 {
					cols = v.AdditionalPrinterColumns
				}
			}
		}
		conv, err := tableconvertor.New(cols)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if t, err = conv.ConvertToTable(context.Background(), in, opts); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// Date columns again, at the step's time.
		for i, c := range cols {
			if c.Type != "date" {
				continue
			}
			jp := jsonpath.New(c.Name)
			if jp.Parse(fmt.Sprintf("{%s}", c.JSONPath)) != nil {
				continue
			}
			jp.AllowMissingKeys(true)
			for r := range t.Rows {
				if r >= len(objs) || i+1 >= len(t.Rows[r].Cells) {
					continue
				}
				res, err := jp.FindResults(objs[r].Object)
				if err != nil || len(res) == 0 || len(res[0]) == 0 {
					continue
				}
				if str, ok := res[0][0].Interface().(string); ok {
					var ts metav1.Time
					if ts.UnmarshalQueryParameter(str) == nil {
						t.Rows[r].Cells[i+1] = age(at, ts.Time)
					}
				}
			}
		}
	} else if bt, ok, err := builtinTable(s.srvOf(k), k, objs, isList, opts, at); err != nil {
		return nil, apierrors.NewInternalError(err)
	} else if ok {
		t = bt
		if isList {
			t.ResourceVersion, t.Continue, t.RemainingItemCount = res.RV, res.Continue, res.Remaining
		} else {
			t.ResourceVersion = objs[0].GetResourceVersion()
		}
	} else {
		t = &metav1.Table{}
		if !opts.NoHeaders {
			t.ColumnDefinitions = []metav1.TableColumnDefinition{
				{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
				{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
			}
		}
		for _, o := range objs {
			t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{o.GetName(), age(at, o.GetCreationTimestamp().Time)}, Object: runtime.RawExtension{Object: o}})
		}
		if isList {
			t.ResourceVersion, t.Continue, t.RemainingItemCount = res.RV, res.Continue, res.Remaining
		} else {
			t.ResourceVersion = objs[0].GetResourceVersion()
		}
	}
	t.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}
	for i := range t.Rows {
		row := &t.Rows[i]
		switch opts.IncludeObject {
		case metav1.IncludeObject:
			if i < len(objs) {
				row.Object = runtime.RawExtension{Object: objs[i]}
			}
		case metav1.IncludeNone:
			row.Object = runtime.RawExtension{}
		case metav1.IncludeMetadata, "":
			m, err := meta.Accessor(row.Object.Object)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			partial := meta.AsPartialObjectMetadata(m)
			partial.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
			row.Object = runtime.RawExtension{Object: partial}
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", opts.IncludeObject))
		}
	}
	return t, nil
}

// age is kubectl's rendering of how old something created at c is at at.
func age(at, c time.Time) string {
	if c.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(at.Sub(c))
}

// Package listfirst wraps client-go clients so that the informers built on
// them list, then watch, instead of asking for a watch-list.
//
// A watch-list's initial objects reach an informer through the reflector's
// temporary store, which hands them over in Go's map order
// (client-go tools/cache/reflector.go watchList), so the handlers of an
// informer started on a cluster with several objects would see them in an
// order that differs from run to run. A list hands them over in the
// server's order (namespace, then name): one of the orders production
// takes, the same in every run. client-go's reflector skips the watch-list
// for a client that says it does not support its semantics
// (util/watchlist.DoesClientNotSupportWatchListSemantics).
package listfirst

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// Clientset is a typed clientset whose informers list first.
type Clientset struct{ kubernetes.Interface }

// IsWatchListSemanticsUnSupported implements client-go's
// unSupportedWatchListSemantics (util/watchlist/watch_list.go).
func (Clientset) IsWatchListSemanticsUnSupported() bool { return true }

// Metadata is a metadata client whose informers list first.
type Metadata struct{ metadata.Interface }

// IsWatchListSemanticsUnSupported implements client-go's
// unSupportedWatchListSemantics.
func (Metadata) IsWatchListSemanticsUnSupported() bool { return true }

package sample

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Feeder is a runnable that, every Period, sends a generic event for the
// ConfigMap "pinged" on Events: the singleton-controller pattern (a
// source.Channel fed by a goroutine) Karpenter and Crossplane use.
type Feeder struct {
	Events chan event.GenericEvent
	Period time.Duration
}

// Start implements manager.Runnable.
func (f *Feeder) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(f.Period):
		}
		select {
		case <-ctx.Done():
			return nil
		case f.Events <- event.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pinged"}}}:
		}
	}
}

// Pinger counts, in data.count of the ConfigMap "pinged", the reconciles
// its channel source triggered.
type Pinger struct {
	client.Client
	Events chan event.GenericEvent
}

// SetupWithManager wires Pinger to a channel source.
func (r *Pinger) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("pinger").
		WatchesRawSource(source.Channel(r.Events, &handler.EnqueueRequestForObject{})).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Pinger) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	err := r.Get(ctx, req.NamespacedName, &cm)
	if apierrors.IsNotFound(err) {
		cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}, Data: map[string]string{"count": "1"}}
		return reconcile.Result{}, r.Create(ctx, &cm)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	n, _ := strconv.Atoi(cm.Data["count"])
	cm.Data["count"] = strconv.Itoa(n + 1)
	return reconcile.Result{}, r.Update(ctx, &cm)
}

// Beacon is a runnable that writes the time since it started into the
// ConfigMap "beacon" every Period: upstream work outside any reconcile.
type Beacon struct {
	Client client.Client
	Period time.Duration
}

// Start implements manager.Runnable.
func (b *Beacon) Start(ctx context.Context) error {
	start := time.Now()
	t := time.NewTicker(b.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "beacon"}}
		_, err := ctrl.CreateOrUpdate(ctx, b.Client, cm, func() error {
			cm.Data = map[string]string{"since": time.Since(start).String()}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

/*
Copyright 2026 The rackwire Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package switchport

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// The events.k8s.io recorder of the reconcilers.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Secrets are neither listed nor watched: every driver call reads the one Secret it needs,
// so a rotated password is used by the next run on the switch.

// Options tune the state machine; the zero value is production.
type Options struct {
	// Drivers builds the driver of a switch. The default refuses (switchdriver.Unavailable)
	// until the Ansible driver is wired in: ports then stay in Configuring with reason
	// DriverUnavailable rather than claim a configuration no switch received.
	Drivers switchdriver.Factory
	// Window is the quiet period after which a switch's run starts: the ports of a burst
	// meet in one run however long the burst takes (up to ten windows).
	Window time.Duration
	// DriverTimeout bounds one driver call, plus DriverTimeoutPerPort for each port in it.
	DriverTimeout        time.Duration
	DriverTimeoutPerPort time.Duration
	// DriftInterval is how often Active ports are read back.
	DriftInterval time.Duration
	// RetryBase and RetryMax bound the backoff after driver failures.
	RetryBase, RetryMax time.Duration
	// Batcher serialises the calls on each switch; the Switch reconciler's provider checks
	// go through the same one.
	Batcher *Batcher
	// Workers is how many ports reconcile at once. No reconcile waits for a switch run: it
	// hands its request over and is woken when the run ends.
	Workers int
	// BreakAfter, BreakBase and BreakMax tune each switch's circuit breaker (see Batcher).
	BreakAfter          int
	BreakBase, BreakMax time.Duration
	// SecretNamespaces are the namespaces whose Secrets the manager was granted; empty is
	// every namespace (see SecretScope).
	SecretNamespaces []string
}

// SecretReader reads credentials uncached, in the granted namespaces only.
func (o Options) SecretReader(mgr ctrl.Manager) SecretScope {
	return SecretScope{Reader: mgr.GetAPIReader(), Namespaces: o.SecretNamespaces}
}

// WithDefaults fills in the production value of every unset option.
func (o Options) WithDefaults() Options {
	if o.Drivers == nil {
		o.Drivers = switchdriver.Unavailable
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Window, 500*time.Millisecond)
	def(&o.DriverTimeout, 10*time.Minute)
	def(&o.DriftInterval, 10*time.Minute)
	def(&o.RetryBase, 5*time.Second)
	def(&o.RetryMax, 5*time.Minute)
	if o.Batcher == nil {
		o.Batcher = NewBatcher(o.Window, o.DriverTimeout)
		o.Batcher.PerPort = o.DriverTimeoutPerPort
		if o.BreakAfter > 0 {
			o.Batcher.BreakAfter = o.BreakAfter
		}
		if o.BreakBase > 0 {
			o.Batcher.BreakBase = o.BreakBase
		}
		if o.BreakMax > 0 {
			o.Batcher.BreakMax = o.BreakMax
		}
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	return o
}

// Setup registers the SwitchPort state machine and the SwitchResourceLimit status
// reconciler with production options.
func Setup(mgr ctrl.Manager) error { return SetupWith(mgr, Options{}) }

// SetupWith is Setup with options; tests pass the fake driver here.
func SetupWith(mgr ctrl.Manager, o Options) error {
	o = o.WithDefaults()
	switchMetrics.Use(mgr.GetCache())
	c := mgr.GetClient()
	r := &Reconciler{
		Client: c, Secrets: o.SecretReader(mgr), Recorder: mgr.GetEventRecorder("switchport-controller"), Drivers: o.Drivers,
		Batcher:       o.Batcher,
		DriftInterval: o.DriftInterval, RetryBase: o.RetryBase, RetryMax: o.RetryMax,
		failures: map[types.NamespacedName]int{},
	}
	if err := IndexFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	m := mapper{c}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("switchport").
		Watches(&networkv1alpha1.SwitchPort{}, portEvents(o.Batcher)).
		WatchesRawSource(source.Channel(Wakes(o.Batcher, "port", func(n types.NamespacedName) client.Object {
			return &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{Namespace: n.Namespace, Name: n.Name}}
		}), &handler.EnqueueRequestForObject{})).
		Watches(&networkv1alpha1.SwitchPortConfiguration{}, handler.EnqueueRequestsFromMapFunc(m.portsLinking)).
		Watches(&networkv1alpha1.SwitchResourceLimit{}, handler.EnqueueRequestsFromMapFunc(m.portsInNamespace)).
		Watches(&networkv1alpha1.Switch{}, handler.EnqueueRequestsFromMapFunc(m.portsOfSwitch)).
		Watches(&networkv1alpha1.AnsibleSwitch{}, handler.EnqueueRequestsFromMapFunc(m.portsOfProvider)).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(false)}).
		Complete(r); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("switchresourcelimit").
		For(&networkv1alpha1.SwitchResourceLimit{}).
		Watches(&networkv1alpha1.SwitchPort{}, handler.EnqueueRequestsFromMapFunc(limitOf)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, UsePriorityQueue: ptr.To(false)}).
		Complete(&LimitReconciler{Client: c})
}

// Wakes is the event source of the requesters of one kind whose switch run has ended.
func Wakes(b *Batcher, kind string, obj func(types.NamespacedName) client.Object) <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 1024)
	b.OnDone(kind, func(n types.NamespacedName) { ch <- event.GenericEvent{Object: obj(n)} })
	return ch
}

// limitOf reaches the limits a port counts against: its namespace's, and the tenant's whose
// configuration it links or holds across namespaces.
func limitOf(_ context.Context, o client.Object) []reconcile.Request {
	p := o.(*networkv1alpha1.SwitchPort)
	var out []reconcile.Request
	seen := map[string]bool{}
	for _, ns := range []string{p.Namespace, heldTenant(p), linkedTenant(p)} {
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName}})
		}
	}
	return out
}

// mapper finds the ports a change of a related object reaches.
type mapper struct{ c client.Reader }

func requests(ports []networkv1alpha1.SwitchPort, keep func(*networkv1alpha1.SwitchPort) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range ports {
		if keep == nil || keep(&ports[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ports[i])})
		}
	}
	return out
}

func (m mapper) portsLinking(ctx context.Context, o client.Object) []reconcile.Request {
	ports, err := tenantPorts(ctx, m.c, o.GetNamespace())
	if err != nil {
		return nil
	}
	return requests(ports, func(p *networkv1alpha1.SwitchPort) bool {
		ref := refOf(p)
		applied := p.Status.ConfigurationRef
		return (ref != nil && ref.Name == o.GetName() && ref.Namespace == o.GetNamespace()) ||
			(applied != nil && applied.Name == o.GetName() && TenantOf(p, applied) == o.GetNamespace())
	})
}

func (m mapper) portsInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	ports, err := tenantPorts(ctx, m.c, o.GetNamespace())
	if err != nil {
		return nil
	}
	return requests(ports, nil)
}

// portsOfSwitch reaches the ports the Switch's entries name, whether they carry its labels or
// not, and the ports whose status records one of its physical ports.
func (m mapper) portsOfSwitch(ctx context.Context, o client.Object) []reconcile.Request {
	seen := map[reconcile.Request]bool{}
	var out []reconcile.Request
	add := func(rs ...reconcile.Request) {
		for _, r := range rs {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	if sw, ok := o.(*networkv1alpha1.Switch); ok {
		for name, e := range sw.Spec.Ports {
			add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: entryNamespace(sw, e), Name: name}})
		}
	}
	for _, opt := range []client.ListOption{
		client.MatchingLabels{LabelSwitchName: o.GetName(), LabelSwitchNamespace: o.GetNamespace()},
		client.MatchingFields{IndexRecordedSwitch: o.GetNamespace() + "/" + o.GetName()},
	} {
		ports := &networkv1alpha1.SwitchPortList{}
		if err := m.c.List(ctx, ports, opt); err == nil {
			add(requests(ports.Items, nil)...)
		}
	}
	return out
}

func (m mapper) portsOfProvider(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, sw := range SwitchesOfProvider(ctx, m.c, o.GetNamespace(), o.GetName()) {
		out = append(out, m.portsOfSwitch(ctx, &sw)...)
	}
	return out
}

// SwitchesOfProvider lists the Switches that use an AnsibleSwitch.
func SwitchesOfProvider(ctx context.Context, c client.Reader, namespace, name string) []networkv1alpha1.Switch {
	list := &networkv1alpha1.SwitchList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var out []networkv1alpha1.Switch
	for _, sw := range list.Items {
		if sw.Spec.Provider.Kind == "AnsibleSwitch" && sw.Spec.Provider.Name == name {
			out = append(out, sw)
		}
	}
	return out
}

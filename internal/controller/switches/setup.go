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

package switches

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/switchdriver/ansible"
)

// Production settings of the switch area, set from the manager's flags.
var (
	// Ansible is how the driver runs ansible-playbook.
	Ansible ansible.Config
	// RunTimeout bounds one playbook run on a switch, plus RunTimeoutPerPort for each port
	// the run reads or changes.
	RunTimeout        = 5 * time.Minute
	RunTimeoutPerPort = 10 * time.Second
	// DriftInterval is how often Active ports are read back from their switch.
	DriftInterval = 10 * time.Minute
	// SecretNamespaces are the namespaces whose Secrets the manager reads (the infra team
	// grants each with config/switch-secrets); switchport.AllNamespaces for every one.
	SecretNamespaces []string
)

// Setup registers the Switch reconciler and the SwitchPort state machine, driving switches
// with the Ansible driver.
func Setup(mgr ctrl.Manager) error {
	if n := ansible.RemoveStale(Ansible.WorkDir); n > 0 {
		mgr.GetLogger().Info("removed run directories of managers that are gone", "count", n)
	}
	return SetupWith(mgr, switchport.Options{
		Drivers: ansible.Factory(withLog(Ansible, mgr)), DriverTimeout: RunTimeout, DriverTimeoutPerPort: RunTimeoutPerPort,
		DriftInterval: DriftInterval, SecretNamespaces: SecretNamespaces,
	})
}

func withLog(c ansible.Config, mgr ctrl.Manager) ansible.Config {
	c.Log = mgr.GetLogger().WithName("ansible")
	return c
}

// SetupWith is Setup with options. Both reconcilers share one Batcher, so a provider check
// never runs on a switch at the same time as a port change.
func SetupWith(mgr ctrl.Manager, o switchport.Options) error {
	o = o.WithDefaults()
	if err := switchport.SetupWith(mgr, o); err != nil {
		return err
	}
	c := mgr.GetClient()
	// A port's own status changes are the state machine's business; the Switch only cares
	// that its ports exist.
	portsComeAndGo := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
	}
	// The Switch's own status patches would wake it for nothing; its finalizer and
	// deletion must not be missed.
	specOrLife := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().IsZero() ||
				len(e.ObjectNew.GetFinalizers()) != len(e.ObjectOld.GetFinalizers())
		},
	})
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&networkv1alpha1.Switch{}, builder.WithPredicates(specOrLife)).
		WatchesRawSource(source.Channel(switchport.Wakes(o.Batcher, "switch", func(n types.NamespacedName) client.Object {
			return &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: n.Namespace, Name: n.Name}}
		}), &handler.EnqueueRequestForObject{})).
		Watches(&networkv1alpha1.SwitchPort{}, handler.EnqueueRequestsFromMapFunc(switchOfPort), builder.WithPredicates(portsComeAndGo)).
		Watches(&networkv1alpha1.AnsibleSwitch{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, a client.Object) []reconcile.Request {
			return switchRequests(switchport.SwitchesOfProvider(ctx, c, a.GetNamespace(), a.GetName()))
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, UsePriorityQueue: ptr.To(false)}).
		Complete(&Reconciler{
			Client: c, Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("switch-controller"),
			Drivers: o.Drivers, Batcher: o.Batcher, Secrets: o.SecretReader(mgr),
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("ansibleswitch").
		For(&networkv1alpha1.AnsibleSwitch{}, builder.WithPredicates(specOrLife)).
		Watches(&networkv1alpha1.Switch{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, sw client.Object) []reconcile.Request {
			s, ok := sw.(*networkv1alpha1.Switch)
			if !ok || s.Spec.Provider.Kind != "AnsibleSwitch" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: s.Namespace, Name: s.Spec.Provider.Name}}}
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, UsePriorityQueue: ptr.To(false)}).
		Complete(&ProviderReconciler{Client: c, Secrets: o.SecretReader(mgr)})
}

func switchOfPort(_ context.Context, p client.Object) []reconcile.Request {
	if sw, ok := switchport.SwitchOf(p); ok {
		return []reconcile.Request{{NamespacedName: sw}}
	}
	return nil
}

func switchRequests(sws []networkv1alpha1.Switch) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(sws))
	for i := range sws {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sws[i])})
	}
	return out
}

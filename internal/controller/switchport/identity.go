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
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// The (switch, physical port) a SwitchPort drives comes only from a Switch entry that names
// the SwitchPort; labels and annotations are hints anyone who creates a SwitchPort can write.

const (
	// IndexSwitchEntry indexes Switches by the SwitchPorts their entries name ("namespace/name").
	IndexSwitchEntry = "rackwire.switchEntry"
	// IndexHeldPort indexes SwitchPorts by the physical port their status records
	// ("switch-namespace/switch-name/port").
	IndexHeldPort = "rackwire.heldPort"
	// IndexRecordedSwitch indexes SwitchPorts by the Switch their status records.
	IndexRecordedSwitch = "rackwire.recordedSwitch"
	// IndexTenant indexes SwitchPorts by the namespaces whose SwitchResourceLimit they count
	// against: their own, and that of the configuration they link or hold (see tenantKeys).
	IndexTenant = "rackwire.tenant"
)

// target is one physical port of one Switch.
type target struct {
	sw   types.NamespacedName
	port string
}

func (t target) String() string { return fmt.Sprintf("port %s of Switch %s", t.port, t.sw) }

func (t target) key() string { return t.sw.Namespace + "/" + t.sw.Name + "/" + t.port }

// entryKeys are the SwitchPorts a Switch's entries name.
func entryKeys(o client.Object) []string {
	sw, ok := o.(*networkv1alpha1.Switch)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(sw.Spec.Ports))
	for name, e := range sw.Spec.Ports {
		out = append(out, entryNamespace(sw, e)+"/"+name)
	}
	return out
}

// recordOf is the physical port a SwitchPort's status says it last drove.
func recordOf(p *networkv1alpha1.SwitchPort) (target, bool) {
	st := p.Status
	if st.Switch == nil || st.PortName == "" {
		return target{}, false
	}
	return target{sw: types.NamespacedName{Namespace: st.Switch.Namespace, Name: st.Switch.Name}, port: st.PortName}, true
}

func heldKeys(o client.Object) []string {
	p, ok := o.(*networkv1alpha1.SwitchPort)
	if !ok {
		return nil
	}
	if t, ok := recordOf(p); ok {
		return []string{t.key()}
	}
	return nil
}

func recordedSwitchKeys(o client.Object) []string {
	p, ok := o.(*networkv1alpha1.SwitchPort)
	if !ok || p.Status.Switch == nil {
		return nil
	}
	return []string{p.Status.Switch.Namespace + "/" + p.Status.Switch.Name}
}

// indexed remembers the caches IndexFields has served: the reconcilers and the webhooks both
// look up by these indexes, either may be set up without the other (--webhooks=false, a
// suite of webhooks alone), and a cache refuses an index registered twice.
var indexed sync.Map

// IndexFields registers the indexes the switch reconcilers and webhooks look ports and entries
// up by, once per cache.
func IndexFields(ctx context.Context, idx client.FieldIndexer) error {
	if _, done := indexed.LoadOrStore(idx, true); done {
		return nil
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.Switch{}, IndexSwitchEntry, entryKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.SwitchPort{}, IndexHeldPort, heldKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.SwitchPort{}, IndexTenant, tenantKeys); err != nil {
		return err
	}
	return idx.IndexField(ctx, &networkv1alpha1.SwitchPort{}, IndexRecordedSwitch, recordedSwitchKeys)
}

// Voucher is the Switch entry that names a SwitchPort.
type Voucher struct {
	Switch *networkv1alpha1.Switch
	Entry  networkv1alpha1.PortInfo
}

// Vouchers picks, from a list of Switches, the entries that name the SwitchPort
// namespace/name. More than one is a conflict: the port is then driven by none of them.
func Vouchers(sws []networkv1alpha1.Switch, namespace, name string) []Voucher {
	var out []Voucher
	for i := range sws {
		sw := &sws[i]
		if e, ok := sw.Spec.Ports[name]; ok && entryNamespace(sw, e) == namespace {
			out = append(out, Voucher{Switch: sw, Entry: e})
		}
	}
	return out
}

// VouchingEntry returns the one Switch entry that names the port, or why there is none. c is
// the manager's cache (IndexSwitchEntry): the reconciler looks the entry up on every
// reconcile, the SwitchPort webhook on every link.
func VouchingEntry(ctx context.Context, c client.Reader, port *networkv1alpha1.SwitchPort) (*Voucher, string, error) {
	list := &networkv1alpha1.SwitchList{}
	if err := c.List(ctx, list, client.MatchingFields{IndexSwitchEntry: port.Namespace + "/" + port.Name}); err != nil {
		return nil, "", err
	}
	v, why := oneVoucher(Vouchers(list.Items, port.Namespace, port.Name), port)
	return v, why, nil
}

func oneVoucher(vs []Voucher, port *networkv1alpha1.SwitchPort) (*Voucher, string) {
	switch len(vs) {
	case 0:
		return nil, fmt.Sprintf("no Switch has an entry for SwitchPort %s/%s", port.Namespace, port.Name)
	case 1:
		return &vs[0], ""
	}
	names := make([]string, 0, len(vs))
	for _, v := range vs {
		names = append(names, v.Switch.Namespace+"/"+v.Switch.Name)
	}
	sort.Strings(names)
	return nil, fmt.Sprintf("Switches %s all have an entry for SwitchPort %s/%s; none drives it until the infra team keeps one",
		strings.Join(names, ", "), port.Namespace, port.Name)
}

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

package holder

import (
	"net/netip"
	"strings"
	"time"
)

// Reason says why a holder is gone; "" means it is alive.
type Reason string

// Reasons a holder is gone, also the reason label of the reaped counter.
const (
	Alive Reason = ""
	// PodGone: no pod of that namespace and name.
	PodGone Reason = "PodGone"
	// PodReplaced: a pod of that name exists, but it is another one (another UID, or created
	// after the address was reserved).
	PodReplaced Reason = "PodReplaced"
	// PodFinished: the pod has succeeded or failed; its sandbox, and the address with it, is gone.
	PodFinished Reason = "PodFinished"
	// NodeGone: the pod's Node was deleted.
	NodeGone Reason = "NodeGone"
)

// Pod is what the verdict needs of a pod.
type Pod struct {
	UID      string
	Created  time.Time
	Node     string
	Finished bool
	// Interfaces are the addresses of each interface in the pod's network status (see
	// NetworkStatus), nil when it has none or when nobody vouches that only Multus writes it
	// (the manager's --ip-reconciler-trust-network-status).
	Interfaces map[string][]netip.Addr
}

// Evidence is what the records say of the holder's identity.
type Evidence struct {
	// UID is the pod UID recorded with the address, "" when none is.
	UID string
	// ReservedAt is when the earliest reservation of the holder's container ID was created
	// (zero when unknown): an ADD runs after its pod was created, so an address reserved
	// before the pod named was created belongs to an earlier pod of that name.
	ReservedAt time.Time
	// Superseded: a later sandbox of the same pod holds this interface (a reservation of
	// another container for the same pod and interface, created after this one's): the
	// kubelet starts a sandbox only once the one before is gone, so this one is.
	Superseded bool
	// Addr and IfName are the record's address and interface, and Siblings the addresses
	// the network's pools record for the same pod and interface under other containers.
	Addr     netip.Addr
	IfName   string
	Siblings []netip.Addr
}

// Judge says whether the pod named by a record still holds it. pod is nil when no pod of
// that name exists; nodeExists says whether the pod's Node exists. skew is the clock
// difference tolerated between the apiservers that stamped the pod and the reservation:
// a reservation within skew of the pod's creation counts as the pod's.
func Judge(pod *Pod, nodeExists bool, ev Evidence, skew time.Duration) Reason {
	switch {
	case pod == nil:
		return PodGone
	case ev.Superseded:
		return PodReplaced
	case ev.UID != "" && ev.UID != pod.UID:
		return PodReplaced
	case ev.UID == "" && !ev.ReservedAt.IsZero() && ev.ReservedAt.Add(skew).Before(pod.Created):
		return PodReplaced
	case ev.UID == "" && ev.ReservedAt.IsZero() && listsSibling(pod, ev.IfName, ev.Addr, ev.Siblings):
		// Only where nothing dates the entry (no reservation): anyone who may update the pod
		// writes network-status, and a reservation's UID or date, where there is one, already
		// told which sandbox is earlier (Superseded, above).
		return PodReplaced
	case pod.Finished:
		return PodFinished
	case pod.Node != "" && !nodeExists:
		return NodeGone
	}
	return Alive
}

// PodRef splits whereabouts' podref "<namespace>/<name>"; false when it is not one.
func PodRef(ref string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return namespace, name, true
}

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

package ipam

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// PoolLabel on every IPAddress (of both kinds) names its IPPool, so that the addresses of
// a pool can be listed when its status no longer carries them (kubectl get -l).
const PoolLabel = "ipam.metal3.io/ippool"

// addressKind is what differs between the Metal3 and the Cluster API IPAddress for the
// steps both claim kinds share (binder): how to make, list and read one.
type addressKind struct {
	claimKind string // kindMetal3 or kindCAPI; also the Kind of the claim's owner reference
	claimFin  finalizers
	addrFin   finalizers
	newList   func() client.ObjectList
	items     func(client.ObjectList) []client.Object
	newObject func() client.Object
	// holds says which address, claim name and pool name an object records.
	holds func(client.Object) (a netip.Addr, claim, pool string, ok bool)
	build func(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool, claim client.Object, a netip.Addr, p ipalloc.Params) (client.Object, error)
}

var metal3Kind = addressKind{
	claimKind: kindMetal3,
	claimFin:  claimFinalizers,
	addrFin:   addressFinalizers,
	newList:   func() client.ObjectList { return &ipamv1alpha1.IPAddressList{} },
	items: func(l client.ObjectList) []client.Object {
		items := l.(*ipamv1alpha1.IPAddressList).Items
		out := make([]client.Object, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out
	},
	newObject: func() client.Object { return &ipamv1alpha1.IPAddress{} },
	holds: func(o client.Object) (netip.Addr, string, string, bool) {
		ip := o.(*ipamv1alpha1.IPAddress)
		a, _, ok := metal3Holder(ip)
		return a, ip.Spec.Claim.Name, ip.Spec.Pool.Name, ok
	},
	build: func(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool, claim client.Object, a netip.Addr, p ipalloc.Params) (client.Object, error) {
		return newMetal3Address(scheme, pool, claim.(*ipamv1alpha1.IPClaim), a, p)
	},
}

var capiKind = addressKind{
	claimKind: kindCAPI,
	claimFin:  capiClaimFinalizers,
	addrFin:   capiAddressFinalizers,
	newList:   func() client.ObjectList { return &capiipamv1beta2.IPAddressList{} },
	items: func(l client.ObjectList) []client.Object {
		items := l.(*capiipamv1beta2.IPAddressList).Items
		out := make([]client.Object, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out
	},
	newObject: func() client.Object { return &capiipamv1beta2.IPAddress{} },
	holds: func(o client.Object) (netip.Addr, string, string, bool) {
		ip := o.(*capiipamv1beta2.IPAddress)
		a, _, ok := capiHolder(ip)
		return a, ip.Spec.ClaimRef.Name, ip.Spec.PoolRef.Name, ok
	},
	build: func(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool, claim client.Object, a netip.Addr, p ipalloc.Params) (client.Object, error) {
		return newCAPIAddress(scheme, pool, claim.(*capiipamv1beta2.IPAddressClaim), a, p)
	},
}

// claimOwner returns the UID of the claim an IPAddress names as its owner, if it names one.
// ip-address-manager sets the owner reference without the controller flag, so any owner
// reference of the claim's kind counts.
func claimOwner(o client.Object, kind string) (types.UID, bool) {
	for _, r := range o.GetOwnerReferences() {
		if r.Kind == kind {
			return r.UID, true
		}
	}
	return "", false
}

// addressLabels are the labels of a new IPAddress: the claim's, as ip-address-manager
// copies them (CAPM3 selects addresses by them), then the pool label and the cluster label
// of the pool's cluster.
func addressLabels(pool *ipamv1alpha1.IPPool, claim client.Object) map[string]string {
	out := map[string]string{}
	for k, v := range claim.GetLabels() {
		out[k] = v
	}
	if len(pool.Name) <= 63 {
		out[PoolLabel] = pool.Name
	}
	if c := clusterOf(pool); c != "" {
		if _, ok := out[ClusterNameLabel]; !ok {
			out[ClusterNameLabel] = c
		}
	}
	return out
}

func ptrUID(o client.Object) *types.UID {
	uid := o.GetUID()
	return &uid
}

// ownerNamed is the claim-side half of an ObjectReference an IPClaim's status uses.
func claimAddressRef(namespace, name string) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: ipamv1alpha1.GroupVersion.String(), Kind: "IPAddress", Namespace: namespace, Name: name,
	}
}

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

package ipamclaim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// nadNetworkIndex indexes NADs of rackwire networks that allow persistent IPs by their CNI
// network name (what IPAMClaim spec.network says).
const nadNetworkIndex = "ipamclaim.nad.network"

// persistentNetworkOf is the CNI network name of a NAD that uses rackwire's IPAM and allows
// persistent IPs, even when the rest of its configuration is wrong (so that the error can
// be reported on the claims); "" otherwise.
func persistentNetworkOf(obj client.Object) string {
	nad, ok := obj.(*nadv1.NetworkAttachmentDefinition)
	if !ok {
		return ""
	}
	n, err := cniconf.Parse([]byte(nad.Spec.Config))
	if errors.Is(err, cniconf.ErrNotRackwire) || !n.PersistentIPs {
		return ""
	}
	return n.Name
}

// served is what the NADs say about a claim's network.
type served struct {
	// ok says a NAD serves it with a configuration that reads well; net is that
	// configuration: the recorded NAD's, or for a claim made before rackwire recorded it, the
	// oldest NAD's of the network name.
	ok  bool
	net cniconf.Network
	// shared names the other NADs of the network name that disagree with it (ranges or
	// network_name): reported in the claim's condition, never silently merged.
	shared string
	// problem explains why no NAD serves it, for the claim's condition.
	problem string
	reason  string
}

// network reads the NAD recorded on the claim (the one its VM names).
func (r *ClaimReconciler) network(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim) (served, error) {
	key, recorded := recordedNAD(claim)
	if !recorded {
		return r.networkByName(ctx, claim.Spec.Network)
	}
	nad := &nadv1.NetworkAttachmentDefinition{}
	if err := r.Get(ctx, key, nad); err != nil {
		if apierrors.IsNotFound(err) {
			return served{problem: fmt.Sprintf("NetworkAttachmentDefinition %s (annotation %s) not found", key, NADAnnotation),
				reason: ReasonNetworkNotFound}, nil
		}
		return served{}, err
	}
	n, err := cniconf.Parse([]byte(nad.Spec.Config))
	switch {
	case errors.Is(err, cniconf.ErrNotRackwire) || !n.PersistentIPs:
		return served{problem: fmt.Sprintf("NetworkAttachmentDefinition %s does not use ipam.type %s with allowPersistentIPs", key, cniconf.IPAMType),
			reason: ReasonNetworkNotFound}, nil
	case n.Name != claim.Spec.Network:
		return served{problem: fmt.Sprintf("NetworkAttachmentDefinition %s serves network %q, the claim's spec.network is %q", key, n.Name, claim.Spec.Network),
			reason: ReasonInvalidNetwork}, nil
	case err != nil:
		return served{problem: fmt.Sprintf("NAD %s: spec.config: %v", key, err), reason: ReasonInvalidNetwork}, nil
	}
	shared, err := r.disagreeing(ctx, key, n)
	if err != nil {
		return served{}, err
	}
	return served{ok: true, net: n, shared: shared}, nil
}

// disagreeing lists the other NADs of the network name whose ranges or network_name differ:
// a pod of theirs takes addresses from another range, or in another reservation scope.
func (r *ClaimReconciler) disagreeing(ctx context.Context, key types.NamespacedName, n cniconf.Network) (string, error) {
	var list nadv1.NetworkAttachmentDefinitionList
	if err := r.List(ctx, &list, client.MatchingFields{nadNetworkIndex: n.Name}); err != nil {
		return "", err
	}
	var others []string
	for i := range list.Items {
		nad := &list.Items[i]
		if client.ObjectKeyFromObject(nad) == key {
			continue
		}
		o, err := cniconf.Parse([]byte(nad.Spec.Config))
		if err != nil || o.Name != n.Name {
			continue
		}
		if o.NetworkName != n.NetworkName || !reflect.DeepEqual(o.Ranges, n.Ranges) {
			others = append(others, nad.Namespace+"/"+nad.Name)
		}
	}
	if len(others) == 0 {
		return "", nil
	}
	slices.Sort(others)
	return fmt.Sprintf("NetworkAttachmentDefinition(s) %s also name network %q with other ranges or network_name; this claim's addresses come from %s",
		strings.Join(others, ", "), n.Name, key), nil
}

// recordedNAD is the NAD the VM controller recorded on the claim.
func recordedNAD(claim *ipamclaimsv1alpha1.IPAMClaim) (types.NamespacedName, bool) {
	v := claim.Annotations[NADAnnotation]
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// networkByName serves the claims made before rackwire recorded their NAD: the oldest NAD of
// the network name sets the ranges.
func (r *ClaimReconciler) networkByName(ctx context.Context, name string) (served, error) {
	var list nadv1.NetworkAttachmentDefinitionList
	if err := r.List(ctx, &list, client.MatchingFields{nadNetworkIndex: name}); err != nil {
		return served{}, err
	}
	// Oldest first: the first NAD of a network sets its ranges.
	slices.SortFunc(list.Items, func(a, b nadv1.NetworkAttachmentDefinition) int {
		if d := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); d != 0 {
			return d
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var problems []string
	for i := range list.Items {
		nad := &list.Items[i]
		n, err := cniconf.Parse([]byte(nad.Spec.Config))
		switch {
		case n.Name != name || !n.PersistentIPs:
			continue // the index ran ahead of or behind the cache
		case err != nil:
			problems = append(problems, fmt.Sprintf("NAD %s/%s: spec.config: %v", nad.Namespace, nad.Name, err))
		default:
			return served{ok: true, net: n}, nil
		}
	}
	if len(problems) > 0 {
		return served{problem: strings.Join(problems, "; "), reason: ReasonInvalidNetwork}, nil
	}
	return served{
		problem: fmt.Sprintf("no NetworkAttachmentDefinition names network %q with ipam.type %s and allowPersistentIPs", name, cniconf.IPAMType),
		reason:  ReasonNetworkNotFound,
	}, nil
}

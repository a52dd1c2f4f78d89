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
	"slices"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
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
	// configuration (the oldest NAD's, when several name the network).
	ok  bool
	net cniconf.Network
	// problem explains why no NAD serves it, for the claim's condition.
	problem string
	reason  string
}

func (r *ClaimReconciler) network(ctx context.Context, name string) (served, error) {
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

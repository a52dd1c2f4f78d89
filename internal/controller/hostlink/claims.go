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

package hostlink

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// claim is one host's hold on a SwitchPort. A port serves one host: the infra team's entries
// beat discovered wiring, then a host that holds the port beats one that does not yet, then
// the earlier holder (two hosts that took the port at once); the UID breaks a tie of two
// holds taken in the same second (metav1.Time keeps seconds), so both sides agree.
type claim struct {
	spec  bool
	held  bool
	since time.Time
	uid   types.UID
}

func (a claim) before(b claim) bool {
	if a.spec != b.spec {
		return a.spec
	}
	if a.held != b.held {
		return a.held
	}
	if !a.since.Equal(b.since) {
		return a.since.Before(b.since)
	}
	return a.uid < b.uid
}

// holding is the status entry by which a HostLink holds the port, if it does.
func holding(l *networkv1alpha1.HostLink, port client.ObjectKey) *networkv1alpha1.HostPortStatus {
	for i := range l.Status.Ports {
		p := &l.Status.Ports[i]
		if p.SwitchPort.Name == port.Name && p.SwitchPort.Namespace == port.Namespace && p.HeldBy == nil && p.Since != nil {
			return p
		}
	}
	return nil
}

// holderOf is the HostLink of another host whose hold on the port comes before this host's
// claim, or nil when this host may drive the port. A HostLink being deleted holds nothing:
// its ports are being released.
func holderOf(ctx context.Context, c client.Reader, link *networkv1alpha1.HostLink, w wired, mine claim) (*networkv1alpha1.HostLink, error) {
	links := &networkv1alpha1.HostLinkList{}
	if err := c.List(ctx, links, client.MatchingFields{IndexLinkedPort: w.port.String()}); err != nil {
		return nil, err
	}
	var best *networkv1alpha1.HostLink
	var bestClaim claim
	for i := range links.Items {
		l := &links.Items[i]
		if l.UID == link.UID || !l.DeletionTimestamp.IsZero() {
			continue
		}
		h := holding(l, w.port)
		if h == nil {
			continue
		}
		theirs := claim{spec: h.Source == networkv1alpha1.WiringSpec, held: true, since: h.Since.Time, uid: l.UID}
		if theirs.before(mine) && (best == nil || theirs.before(bestClaim)) {
			best, bestClaim = l, theirs
		}
	}
	return best, nil
}

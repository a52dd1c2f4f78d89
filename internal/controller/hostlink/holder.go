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
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// The HostLinks' statuses say who holds a port only once written: two hosts claiming one
// port at once both find no holder there. The SwitchPort's holder annotation, written with
// the port's resourceVersion as a precondition in the same patch that links the port, makes
// the take atomic: of two takes from the same version one fails, and its host then reads the
// other's name on the port.

type recorded struct {
	link   client.ObjectKey
	uid    types.UID
	source networkv1alpha1.WiringSource
}

func holderValue(link *networkv1alpha1.HostLink, source networkv1alpha1.WiringSource) string {
	return strings.Join([]string{link.Namespace, link.Name, string(link.UID), string(source)}, "/")
}

func parseHolder(v string) (recorded, bool) {
	f := strings.Split(v, "/")
	if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" {
		return recorded{}, false
	}
	return recorded{link: client.ObjectKey{Namespace: f[0], Name: f[1]}, uid: types.UID(f[2]), source: networkv1alpha1.WiringSource(f[3])}, true
}

// holdsRecord says whether the SwitchPort names this HostLink as its holder.
func holdsRecord(p *networkv1alpha1.SwitchPort, link *networkv1alpha1.HostLink) bool {
	h, ok := parseHolder(p.Annotations[networkv1alpha1.AnnotationPortHolder])
	return ok && h.uid == link.UID
}

// recordedHolder is the HostLink the SwitchPort names as its holder when that link still
// holds the port and its claim comes before mine; nil when this host may take the port. A
// holder that is gone, being deleted, held off the port, or done cleaning it holds nothing.
// A holder whose status does not show the port yet is taking it right now (or crashed
// between the take and its status): it comes first unless only mine is the infra team's.
func recordedHolder(ctx context.Context, c client.Reader, link *networkv1alpha1.HostLink, p *networkv1alpha1.SwitchPort, mine claim) (*networkv1alpha1.HostLink, error) {
	h, ok := parseHolder(p.Annotations[networkv1alpha1.AnnotationPortHolder])
	if !ok || h.uid == link.UID {
		return nil, nil
	}
	other := &networkv1alpha1.HostLink{}
	if err := c.Get(ctx, h.link, other); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if other.UID != h.uid || !other.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	theirs := claim{spec: h.source == networkv1alpha1.WiringSpec, held: true, uid: other.UID}
	if e := previous(other, client.ObjectKeyFromObject(p)); e != nil {
		switch {
		case e.HeldBy != nil:
			return nil, nil
		case e.Since != nil:
			theirs.since = e.Since.Time
		case p.Spec.Configuration == nil:
			return nil, nil // cleaned and let go
		}
	}
	if theirs.before(mine) {
		return other, nil
	}
	return nil, nil
}

// dropRecord takes this HostLink's name off a port it finished cleaning: the port is free
// for another host.
func (r *Reconciler) dropRecord(ctx context.Context, p *networkv1alpha1.SwitchPort, link *networkv1alpha1.HostLink) error {
	if !holdsRecord(p, link) {
		return nil
	}
	base := p.DeepCopy()
	delete(p.Annotations, networkv1alpha1.AnnotationPortHolder)
	return r.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

func holderKeys(o client.Object) []string {
	if h, ok := parseHolder(o.GetAnnotations()[networkv1alpha1.AnnotationPortHolder]); ok {
		return []string{string(h.uid)}
	}
	return nil
}

// recordedPorts are the SwitchPorts that name the HostLink as their holder: a port is linked
// and named in one write, so a port the manager drove is found here even when it died before
// the HostLink's status said so.
func recordedPorts(ctx context.Context, c client.Reader, link *networkv1alpha1.HostLink) ([]networkv1alpha1.SwitchPort, error) {
	ports := &networkv1alpha1.SwitchPortList{}
	if err := c.List(ctx, ports, client.MatchingFields{IndexPortHolder: string(link.UID)}); err != nil {
		return nil, err
	}
	return ports.Items, nil
}

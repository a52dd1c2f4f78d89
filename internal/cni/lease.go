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

package cni

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// whereabouts binaries decide an address between reading its reservation and writing the
// pool, trusting their Lease to keep everyone else out meanwhile: on a network they share
// (ipam key whereabouts_lease), rackwire takes the same Lease, as their leader election
// does, so their ADDs never fail on rackwire's reservations. Elsewhere it takes none.

// lease is a coordination.k8s.io/v1 Lease, every field of its spec as of Kubernetes 1.36, so
// a PUT carries back what it read (the plugin does not link k8s.io/api; see podEvent).
type lease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              leaseSpec `json:"spec"`
}

type leaseSpec struct {
	HolderIdentity       *string           `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *metav1.MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *metav1.MicroTime `json:"renewTime,omitempty"`
	LeaseTransitions     *int32            `json:"leaseTransitions,omitempty"`
	Strategy             *string           `json:"strategy,omitempty"`
	PreferredHolder      *string           `json:"preferredHolder,omitempty"`
}

// leaseHold is how long a holder may keep the Lease without renewing it: longer than a
// verb takes, so rackwire never renews; whereabouts' elector honours the holder's duration.
const leaseHold = 15

// leaseName is whereabouts': one per network, or per node slice pool in node-slice mode.
func (c *call) leaseName(pool string) string {
	if c.cfg.SliceSize != "" && pool != "" {
		return pool
	}
	return "whereabouts"
}

// takeLease waits for the Lease and takes it; the returned func gives it back.
func (c *call) takeLease(ctx context.Context, name string) (func(), error) {
	path := "/apis/coordination.k8s.io/v1/namespaces/" + c.kube.namespace + "/leases/" + name
	me := c.podRef() + "/" + c.containerID
	var seen observed
	for {
		now := metav1.NewMicroTime(time.Now())
		cur := &lease{}
		err := c.kube.get(ctx, path, cur)
		if err == nil {
			seen.see(cur, now.Time)
		}
		switch {
		case apierrors.IsNotFound(err):
			l := &lease{
				TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.kube.namespace},
				Spec:       leaseSpec{HolderIdentity: &me, LeaseDurationSeconds: ptr(int32(leaseHold)), AcquireTime: &now, RenewTime: &now},
			}
			if err := c.kube.create(ctx, "/apis/coordination.k8s.io/v1/namespaces/"+c.kube.namespace+"/leases", l, cur); err == nil {
				return c.giveBack(path, cur), nil
			} else if !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("taking Lease %s: %w", name, err)
			}
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("whereabouts_lease: reading Lease %s/%s: %w (the plugin needs the opt-in Role of config/cni/whereabouts-lease.yaml)",
				c.kube.namespace, name, err)
		case err != nil:
			return nil, fmt.Errorf("reading Lease %s: %w", name, err)
		case free(cur, seen.since, now.Time):
			cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds = &me, ptr(int32(leaseHold))
			cur.Spec.AcquireTime, cur.Spec.RenewTime = &now, &now
			if err := c.kube.do(ctx, "PUT", path, "", cur, cur); err == nil {
				return c.giveBack(path, cur), nil
			} else if !apierrors.IsConflict(err) {
				return nil, fmt.Errorf("taking Lease %s: %w", name, err)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for Lease %s/%s: %w", c.kube.namespace, name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// maxSkew bounds how far another node's clock may be from this one's. The holder writes
// renewTime by its own clock.
const maxSkew = time.Second

// observed is when this process first saw the Lease as it now stands (its resourceVersion),
// by its own clock: client-go's elector (whereabouts') counts a holder's duration from there,
// never from renewTime, which is the holder's clock.
type observed struct {
	version string
	since   time.Time
}

func (o *observed) see(l *lease, now time.Time) {
	if l.ResourceVersion != o.version || o.since.IsZero() {
		o.version, o.since = l.ResourceVersion, now
	}
}

// free says whether the Lease's holder gave it back or let it lapse: no holder; or the same
// record seen unchanged here for its whole duration (as client-go decides); or renewTime,
// by the holder's clock, older than its duration plus maxSkew, so that a clock up to maxSkew
// ahead of the holder's never takes a Lease still held.
func free(l *lease, seenSince, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return true
	}
	if l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	d := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	if !seenSince.IsZero() && now.Sub(seenSince) > d {
		return true
	}
	return l.Spec.RenewTime != nil && l.Spec.RenewTime.Add(d+maxSkew).Before(now)
}

// giveBack releases the Lease as client-go's elector does on cancel: no holder, a
// one-second duration.
func (c *call) giveBack(path string, held *lease) func() {
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestWait)
		defer cancel()
		empty := ""
		held.Spec.HolderIdentity, held.Spec.LeaseDurationSeconds = &empty, ptr(int32(1))
		_ = c.kube.do(ctx, "PUT", path, "", held, nil)
	}
}

func ptr[T any](v T) *T { return &v }

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
	"errors"
	"fmt"
	"net/netip"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// The flusher's writes to one IPPool: the node's new entries and its released ones in one
// JSON patch, each tested; entry by entry when that patch is turned down.

// flushResult is what a flush did, by pool/address.
type flushResult struct {
	// written: the add landed (or the entry was already this attachment's).
	written map[string]bool
	// refused: the add did not land, for certain, and why: the offset is held by another
	// live attachment, or the apiserver turned the write down (see refusedForGood); "" when
	// it was one of a patch turned down for one of its entries, not known which.
	refused map[string]string
	// removed: the entry is no longer this attachment's in the pool; held: another holder
	// has the offset now (its reservation is not this attachment's to delete).
	removed, held map[string]bool
}

func newFlushResult() *flushResult {
	return &flushResult{written: map[string]bool{}, refused: map[string]string{}, removed: map[string]bool{}, held: map[string]bool{}}
}

// writePool writes one pool's adds and removals in one patch (creating the pool if need be),
// each add tested free and each removal tested to be its attachment's; if the patch is
// refused, one by one, so one taken offset or one entry the apiserver turns down fails alone.
func (c *call) writePool(ctx context.Context, pool string, adds, removes []flushItem, res *flushResult) error {
	var all, rm []poolWrite
	for _, it := range adds {
		if w, ok := writeOf(pool, it); ok {
			all = append(all, w)
		}
	}
	for _, it := range removes {
		if w, ok := writeOf(pool, it); ok {
			rm = append(rm, w)
		}
	}
	ops := make([]patchOp, 0, 2*len(all)+3*len(rm))
	for _, x := range all {
		ops = append(ops, patchOp{Op: "test", Path: allocPath(x.key), Value: nil}, patchOp{Op: "add", Path: allocPath(x.key), Value: x.alloc})
	}
	for _, x := range rm {
		ops = append(ops, patchOp{Op: "test", Path: allocPath(x.key) + "/id", Value: x.alloc.ContainerID},
			patchOp{Op: "test", Path: allocPath(x.key) + "/ifname", Value: x.alloc.IfName},
			patchOp{Op: "remove", Path: allocPath(x.key)})
	}
	err := c.kube.patchPool(ctx, pool, ops)
	if apierrors.IsNotFound(err) {
		// No pool: nothing to take out of it.
		for _, x := range rm {
			res.removed[x.id] = true
		}
		rm, err = nil, nil
		if len(all) > 0 {
			np, perr := newPool(pool, c.kube.namespace, all)
			if perr != nil {
				return perr
			}
			if err = c.kube.createPool(ctx, np); apierrors.IsAlreadyExists(err) {
				err = c.kube.patchPool(ctx, pool, ops[:2*len(all)])
			}
		}
	}
	if err == nil {
		for _, x := range all {
			res.written[x.id] = true
		}
		for _, x := range rm {
			res.removed[x.id] = true
		}
		return nil
	}
	if refusedForGood(err) {
		// None of it landed. Each entry is tried alone below and keeps this reason only
		// if it is turned down alone too.
		for _, x := range all {
			res.refused[x.id] = err.Error()
		}
	} else if !apierrors.IsInvalid(err) {
		return fmt.Errorf("writing IPPool %s: %w", pool, err)
	}
	// One by one: an entry already there and this attachment's counts as written.
	cur, err := c.getPool(ctx, pool)
	if err != nil {
		// The entries' own tries, which would tell which of them the apiserver turned down,
		// need that read: none of them carries the patch's reason.
		for _, x := range all {
			if _, ok := res.refused[x.id]; ok {
				res.refused[x.id] = ""
			}
		}
		return err
	}
	var errs []error
	for _, x := range rm {
		a, ok := allocationOf(cur, x.key)
		switch {
		case !ok:
			res.removed[x.id] = true
		case a.ContainerID != x.alloc.ContainerID || a.IfName != x.alloc.IfName:
			res.removed[x.id], res.held[x.id] = true, true
		default:
			err := c.kube.patchPool(ctx, pool, []patchOp{
				{Op: "test", Path: allocPath(x.key) + "/id", Value: a.ContainerID},
				{Op: "test", Path: allocPath(x.key) + "/ifname", Value: a.IfName},
				{Op: "remove", Path: allocPath(x.key)}})
			if err == nil || apierrors.IsNotFound(err) {
				res.removed[x.id] = true
			} else {
				errs = append(errs, fmt.Errorf("IPPool %s: taking out offset %s of %s: %w", pool, x.key, x.alloc.PodRef, err))
			}
		}
	}
	for _, x := range all {
		if a, ok := allocationOf(cur, x.key); ok {
			delete(res.refused, x.id)
			switch {
			case a.ContainerID == x.alloc.ContainerID && a.IfName == x.alloc.IfName:
				res.written[x.id] = true
			case c.leaked(ctx, a, x.resv, x.alloc):
				// Left by an attachment gone from this node that no longer holds the
				// reservation (a write whose answer was lost, then its DEL): ours now.
				err := c.kube.patchPool(ctx, pool, []patchOp{
					{Op: "test", Path: allocPath(x.key) + "/id", Value: a.ContainerID},
					{Op: "test", Path: allocPath(x.key) + "/podref", Value: a.PodRef},
					{Op: "replace", Path: allocPath(x.key), Value: x.alloc}})
				if err == nil {
					res.written[x.id] = true
				} else {
					errs = append(errs, fmt.Errorf("IPPool %s: taking over offset %s left by %s: %w", pool, x.key, a.PodRef, err))
				}
			default:
				// Not named: the reason goes into an Event in x's namespace, and the holder
				// may be another tenant's pod.
				why := fmt.Sprintf("IPPool %s: offset %s is held by another attachment, not %s", pool, x.key, x.alloc.PodRef)
				res.refused[x.id] = why
				errs = append(errs, errors.New(why))
			}
			continue
		}
		err := c.addOne(ctx, pool, x)
		switch {
		case err == nil:
			res.written[x.id] = true
			delete(res.refused, x.id)
		case refusedForGood(err):
			res.refused[x.id] = err.Error()
			errs = append(errs, fmt.Errorf("IPPool %s: offset %s of %s: %w", pool, x.key, x.alloc.PodRef, err))
		default:
			delete(res.refused, x.id)
			errs = append(errs, fmt.Errorf("IPPool %s: offset %s of %s: %w", pool, x.key, x.alloc.PodRef, err))
		}
	}
	return errors.Join(errs...)
}

// poolWrite is one entry of a pool write: its allocations key, what is written there, its
// pool/address id, its reservation's name and its pool's range.
type poolWrite struct {
	key   string
	alloc wbv1.IPAllocation
	id    string
	resv  string
	rng   string
}

func writeOf(pool string, it flushItem) (poolWrite, bool) {
	key, _, ok := it.entry.key()
	if !ok {
		return poolWrite{}, false
	}
	return poolWrite{key: key, id: pool + "/" + it.entry.Address, resv: it.entry.Reservation, rng: it.entry.Range,
		alloc: wbv1.IPAllocation{ContainerID: it.rec.ContainerID, PodRef: it.rec.PodRef, IfName: it.rec.IfName}}, true
}

// newPool is pool holding ws, its range theirs.
func newPool(pool, namespace string, ws []poolWrite) (*wbv1.IPPool, error) {
	pr, err := netip.ParsePrefix(ws[0].rng)
	if err != nil {
		return nil, err
	}
	np := &wbv1.IPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: wbv1.GroupVersion.String(), Kind: "IPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: pool, Namespace: namespace},
		Spec:       wbv1.IPPoolSpec{Range: pr.Masked().String(), Allocations: map[string]wbv1.IPAllocation{}},
	}
	for _, x := range ws {
		np.Spec.Allocations[x.key] = x.alloc
	}
	return np, nil
}

// addOne writes one entry where the offset was free, creating the pool with it if it is
// missing.
func (c *call) addOne(ctx context.Context, pool string, x poolWrite) error {
	ops := []patchOp{{Op: "test", Path: allocPath(x.key), Value: nil}, {Op: "add", Path: allocPath(x.key), Value: x.alloc}}
	err := c.kube.patchPool(ctx, pool, ops)
	if !apierrors.IsNotFound(err) {
		return err
	}
	np, err := newPool(pool, c.kube.namespace, []poolWrite{x})
	if err != nil {
		return err
	}
	if err := c.kube.createPool(ctx, np); !apierrors.IsAlreadyExists(err) {
		return err
	}
	return c.kube.patchPool(ctx, pool, ops)
}

func allocationOf(p *wbv1.IPPool, key string) (wbv1.IPAllocation, bool) {
	if p == nil {
		return wbv1.IPAllocation{}, false
	}
	a, ok := p.Spec.Allocations[key]
	return a, ok
}

// leaked says whether pool entry a, found where the flusher writes alloc, was left by an
// attachment that is gone: no record file of it on this node (this layout or the old one),
// and the address's reservation alloc's. A file that does not read as a record (a power
// cut's, see decodeRecord) is an attachment whose DEL has not come, which may be live.
func (c *call) leaked(ctx context.Context, a wbv1.IPAllocation, reservation string, alloc wbv1.IPAllocation) bool {
	for _, st := range []*state{c.st, c.legacy} {
		if st == nil {
			continue
		}
		if _, err := os.Lstat(st.path(a.ContainerID, a.IfName)); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	o := &wbv1.OverlappingRangeIPReservation{}
	if err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", reservation), o); err != nil {
		return false
	}
	return o.Spec.ContainerID == alloc.ContainerID && o.Spec.IfName == alloc.IfName
}

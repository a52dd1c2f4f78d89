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

	"github.com/containernetworking/cni/pkg/skel"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Del is the DEL verb: it frees what the attachment holds and succeeds when it holds nothing.
func Del(args *skel.CmdArgs) error {
	if storedNames(args) != nil {
		// ADD refuses such a name: it holds nothing. As JSON keeps it, it is the name of
		// others (see storedNames), whose addresses a DEL by name would free.
		return nil
	}
	c, err := newCall(args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	if c.legacy != nil {
		if rec, err := c.st.load(c.containerID, c.ifName); err == nil && rec == nil {
			if found, err := c.delLegacy(ctx); found || err != nil {
				return err
			}
		}
	}
	if err := c.st.Lock(); err != nil {
		return err
	}
	defer c.st.Unlock()
	rec, err := c.st.load(c.containerID, c.ifName)
	if err == nil && rec != nil {
		behind, berr := c.releaseBehind(rec)
		if berr != nil {
			return berr
		}
		if behind {
			c.st.Unlock()
			return c.kickFlusher(args.StdinData)
		}
		rec, err = c.waitFlushed(ctx, rec)
	}
	if err != nil {
		return err
	}
	if rec == nil {
		rec = &record{ContainerID: c.containerID, IfName: c.ifName}
	}
	if rec.Claim == "" {
		if len(rec.Entries) == 0 {
			// No record: the pools this node would use now, for an allocation made without
			// one (a whereabouts binary's, or a node whose state directory was wiped).
			targets, err := c.targets(ctx)
			switch {
			case err == nil:
				for _, t := range targets {
					rec.Entries = append(rec.Entries, entry{Pool: t.pool, Range: t.poolRange.String()})
				}
			case ctx.Err() != nil:
				return err
			}
		}
		if c.cfg.WhereaboutsLease && len(rec.Entries) > 0 {
			giveBack, err := c.takeLease(ctx, c.leaseName(rec.Entries[0].Pool))
			if err != nil {
				return err
			}
			defer giveBack()
		}
	}
	return c.release(ctx, rec)
}

// release frees the attachment's addresses in the pools rec names: the pool entries of this
// container and interface first, then the reservations of the addresses no pool entry holds
// any more; the record goes last. A claim's addresses are in no pool entry of a container
// and are never touched.
func (c *call) release(ctx context.Context, rec *record) error {
	pools := map[string]string{}
	var order []string
	for _, e := range rec.Entries {
		if _, ok := pools[e.Pool]; !ok {
			order = append(order, e.Pool)
		}
		pools[e.Pool] = e.Range
	}
	var free []netip.Addr
	held := map[netip.Addr]bool{}
	// The record names each address's pool entry: remove it without reading the pool. A
	// refused test (the entry absent, or someone else's) sends that pool to the full read.
	read := map[string]bool{}
	for _, e := range rec.Entries {
		if e.Pending && !e.Flushing && !e.Tried {
			// Never written to the pool: only its reservation is left to go, and its place
			// in the node's view of the pool.
			if key, _, ok := e.key(); ok {
				c.noteCached(e.Pool, e.Range, key, false)
			}
			continue
		}
		key, a, ok := e.key()
		if !ok {
			read[e.Pool] = true
			continue
		}
		err := c.kube.patchPool(ctx, e.Pool, []patchOp{
			{Op: "test", Path: allocPath(key) + "/id", Value: c.containerID},
			{Op: "test", Path: allocPath(key) + "/ifname", Value: c.ifName},
			{Op: "remove", Path: allocPath(key)},
		})
		switch {
		case err == nil:
			free = append(free, a)
			c.noteCached(e.Pool, e.Range, key, false)
		case apierrors.IsInvalid(err) && !refusedForGood(err), apierrors.IsNotFound(err):
			// A test that failed; a refusal (admission, validation) is the DEL's error.
			read[e.Pool] = true
		default:
			return fmt.Errorf("freeing %s in IPPool %s: %w", a, e.Pool, err)
		}
	}
	for _, name := range order {
		if !read[name] {
			continue
		}
		pool, err := c.getPool(ctx, name)
		if err != nil {
			return err
		}
		if pool == nil {
			continue
		}
		pr, err := netip.ParsePrefix(pool.Spec.Range)
		if err != nil {
			return fmt.Errorf("IPPool %s: spec.range %q: %w", name, pool.Spec.Range, err)
		}
		pr = pr.Masked()
		for key, a := range pool.Spec.Allocations {
			addr, err := AtOffset(pr, key)
			if err != nil {
				continue
			}
			if a.ContainerID != c.containerID || a.IfName != c.ifName {
				held[addr] = true
				continue
			}
			err = c.kube.patchPool(ctx, name, []patchOp{
				{Op: "test", Path: allocPath(key) + "/id", Value: a.ContainerID},
				{Op: "test", Path: allocPath(key) + "/podref", Value: a.PodRef},
				{Op: "remove", Path: allocPath(key)},
			})
			switch {
			case err == nil, apierrors.IsNotFound(err):
				free = append(free, addr)
				c.noteCached(name, pool.Spec.Range, key, false)
			case apierrors.IsInvalid(err) && !refusedForGood(err):
				// Taken over meanwhile (the pod's new sandbox): no longer ours to free. A
				// refusal is not that: the entry and its reservation stay, and so does the
				// record, for the next DEL.
				held[addr] = true
			default:
				return fmt.Errorf("freeing %s in IPPool %s: %w", addr, name, err)
			}
		}
	}
	for _, e := range rec.Entries {
		if a, err := netip.ParseAddr(e.Address); err == nil && !held[a] {
			free = append(free, a)
		}
	}
	seen := map[netip.Addr]bool{}
	var errs []error
	for _, a := range free {
		if seen[a] || held[a] {
			continue
		}
		seen[a] = true
		if err := c.unreserveName(ctx, ReservationName(c.cfg.PoolNetwork(), a)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	c.st.unmarkPending(rec)
	return c.st.remove(rec.ContainerID, rec.IfName)
}

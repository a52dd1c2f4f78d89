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
	"net/netip"
)

// Upgrading from the layout keyed by the configuration's name (<node>/<name>/): records of
// that layout are never moved (a flusher of the old binary may still be writing them) and
// nothing new goes there. DEL looks there for its attachment when the new directory has no
// record of it: an attachment (container, interface) is one network's on a node, so the
// record found is this DEL's whatever the configuration. GC takes from there only the
// records whose every pool is one of this configuration's (its network, its ranges, its
// node's slice inside its range): another NAD of the same name shares that directory, and
// its attachments are not in this network's valid-attachments.

// delLegacy releases the attachment's record of the old layout, if there is one; found is
// false when there is none.
func (c *call) delLegacy(ctx context.Context) (found bool, err error) {
	if c.legacy == nil {
		return false, nil
	}
	old := *c
	old.st, old.legacy = c.legacy, nil
	if err := old.st.Lock(); err != nil {
		return false, err
	}
	defer old.st.Unlock()
	rec, err := old.st.load(c.containerID, c.ifName)
	if err != nil || rec == nil {
		return false, err
	}
	if rec, err = old.waitFlushed(ctx, rec); err != nil || rec == nil {
		return rec != nil, err
	}
	if rec.Claim == "" && c.cfg.WhereaboutsLease && len(rec.Entries) > 0 {
		giveBack, err := old.takeLease(ctx, old.leaseName(rec.Entries[0].Pool))
		if err != nil {
			return true, err
		}
		defer giveBack()
	}
	return true, old.release(ctx, rec)
}

// gcLegacy releases the records of the old layout that are this configuration's and not
// valid.
func (c *call) gcLegacy(ctx context.Context, valid map[[2]string]bool) error {
	if c.legacy == nil {
		return nil
	}
	old := *c
	old.st, old.legacy = c.legacy, nil
	if err := old.st.Lock(); err != nil {
		return err
	}
	defer old.st.Unlock()
	return old.gcRecords(ctx, valid, c.ownsLegacy)
}

// ownsLegacy says whether a record of the old layout is this configuration's: every entry
// in a pool this configuration allocates from. A record without entries (an ADD cut short
// before it chose, or a claim's) cannot be told apart and is left to its DEL.
func (c *call) ownsLegacy(r *record) bool {
	if len(r.Entries) == 0 {
		return false
	}
	for _, e := range r.Entries {
		pr, err := netip.ParsePrefix(e.Range)
		if err != nil || !c.ownsPool(e.Pool, pr.Masked()) {
			return false
		}
	}
	return true
}

// ownsPool says whether pool (of spec.range pr) is one this configuration allocates from.
func (c *call) ownsPool(pool string, pr netip.Prefix) bool {
	cfg := c.cfg
	if cfg.SliceSize != "" {
		return len(cfg.Ranges) > 0 && inside(pr, cfg.Ranges[0].Subnet) && pool == PoolName(cfg.PoolNetwork(), c.node, pr)
	}
	for _, r := range cfg.Ranges {
		if r.Subnet.Masked() == pr && pool == PoolName(cfg.PoolNetwork(), "", pr) {
			return true
		}
	}
	return false
}

// inside says whether p lies within r.
func inside(p, r netip.Prefix) bool {
	return p.IsValid() && r.IsValid() && p.Bits() >= r.Bits() && r.Masked().Contains(p.Masked().Addr())
}

// describe names an attachment in errors.
func describe(r *record) string {
	return fmt.Sprintf("container %s, interface %s", r.ContainerID, r.IfName)
}

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
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// In node-slice mode a node's IPPool is written by that node alone (its rackwire and
// whereabouts binaries), so each ADD need not read it back: the taken offsets are kept
// beside the records. A stale view costs nothing but a retry: an address someone else took
// meanwhile fails its reservation create or the pool patch's test, and the pool is then
// read again; an address freed elsewhere waits for the next read. A view older than
// poolCacheTTL is read again: by the flusher, behind an ADD that goes on with the old view
// (that read grows with the pool: 1,000 entries are about 110 KB), or else by the ADD.
const poolCacheTTL = 30 * time.Second

type poolCache struct {
	Range string          `json:"range"`
	Taken map[string]bool `json:"taken"`
	Read  time.Time       `json:"read"`
}

func (s *state) cachePath(pool string) string { return filepath.Join(s.dir, ".pool-"+safeName(pool)) }

// cachedPool is the node's view of pool, nil when there is none worth trusting.
func (c *call) cachedPool(pool string) *wbv1.IPPool {
	p, stale := c.viewOf(pool)
	if stale {
		return nil
	}
	return p
}

// viewOf is the node's view of pool, nil when there is none; stale says it is older than
// poolCacheTTL.
func (c *call) viewOf(pool string) (*wbv1.IPPool, bool) {
	if c.cfg.SliceSize == "" {
		return nil, false
	}
	pc := c.st.readView(pool)
	if pc == nil {
		return nil, false
	}
	p := &wbv1.IPPool{Spec: wbv1.IPPoolSpec{Range: pc.Range, Allocations: map[string]wbv1.IPAllocation{}}}
	p.Name = pool
	for k := range pc.Taken {
		p.Spec.Allocations[k] = wbv1.IPAllocation{}
	}
	return p, pc.stale()
}

func (s *state) readView(pool string) *poolCache {
	b, err := os.ReadFile(s.cachePath(pool))
	if err != nil {
		return nil
	}
	pc := &poolCache{}
	if json.Unmarshal(b, pc) != nil {
		return nil
	}
	return pc
}

func (pc *poolCache) stale() bool {
	age := time.Since(pc.Read)
	return age > poolCacheTTL || age < 0
}

// cachePool records what a read of the pool showed.
func (c *call) cachePool(p *wbv1.IPPool) {
	if c.cfg.SliceSize == "" || p == nil {
		return
	}
	pc := &poolCache{Range: p.Spec.Range, Taken: map[string]bool{}, Read: time.Now()}
	for k := range p.Spec.Allocations {
		pc.Taken[k] = true
	}
	// What this node handed out and has not written yet is not in the pool read.
	if recs, err := c.st.pendingRecords(0); err == nil {
		for _, r := range recs {
			for _, e := range r.Entries {
				pr, perr := netip.ParsePrefix(e.Range)
				a, aerr := netip.ParseAddr(e.Address)
				if e.Pool == p.Name && e.Pending && perr == nil && aerr == nil {
					pc.Taken[Offset(pr.Masked(), a)] = true
				}
			}
		}
	}
	c.writeCache(p.Name, pc)
}

// noteCached adds (or drops) an offset in the view, keeping its read time.
func (c *call) noteCached(pool, rng, key string, taken bool) {
	if c.cfg.SliceSize == "" {
		return
	}
	b, err := os.ReadFile(c.st.cachePath(pool))
	pc := &poolCache{}
	if err != nil || json.Unmarshal(b, pc) != nil {
		if !taken || !errors.Is(err, os.ErrNotExist) {
			return
		}
		// The pool was just created by this ADD: its whole content is known.
		pc = &poolCache{Range: rng, Taken: map[string]bool{}, Read: time.Now()}
	}
	if taken {
		pc.Taken[key] = true
	} else {
		delete(pc.Taken, key)
	}
	c.writeCache(pool, pc)
}

func (c *call) writeCache(pool string, pc *poolCache) {
	b, err := json.Marshal(pc)
	if err != nil {
		return
	}
	_ = writeIfChanged(c.st.cachePath(pool), b, 0o600)
}

// refreshViews reads again the pools whose view is stale, for the ADDs that went on with it.
// A pool entry freed between the read and the view's write stays taken in the view until
// the next read; what the node handed out meanwhile is pending, and kept.
func (c *call) refreshViews(ctx context.Context) error {
	paths, err := filepath.Glob(filepath.Join(c.st.dir, ".pool-*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range paths {
		// Pool names are DNS subdomains: safeName left them as they were.
		name := strings.TrimPrefix(filepath.Base(path), ".pool-")
		pc := c.st.readView(name)
		if strings.HasSuffix(name, ".tmp") || pc == nil || !pc.stale() {
			continue
		}
		p, err := c.getPool(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p == nil {
			p = &wbv1.IPPool{Spec: wbv1.IPPoolSpec{Range: pc.Range}}
			p.Name = name
		}
		if err := c.st.Lock(); err != nil {
			return err
		}
		c.cachePool(p)
		c.st.Unlock()
	}
	return errors.Join(errs...)
}

// The node's slice changes only when the network is re-sliced or the Node is deleted, and
// rackwire's manager then keeps the old slice from every other node while its pool holds
// addresses, and for --nodeslice-release-grace (2m) after: a slice read a few seconds ago
// is as good as the NodeSlicePool itself.
const sliceCacheTTL = 10 * time.Second

type sliceCache struct {
	Slice string    `json:"slice"`
	Read  time.Time `json:"read"`
}

func (s *state) slicePath() string { return filepath.Join(s.dir, ".slice") }

func (c *call) cachedSlice() (netip.Prefix, bool) {
	b, err := os.ReadFile(c.st.slicePath())
	if err != nil {
		return netip.Prefix{}, false
	}
	sc := &sliceCache{}
	if json.Unmarshal(b, sc) != nil || time.Since(sc.Read) > sliceCacheTTL || time.Since(sc.Read) < 0 {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(sc.Slice)
	return p, err == nil
}

func (c *call) cacheSlice(p netip.Prefix) {
	if b, err := json.Marshal(sliceCache{Slice: p.String(), Read: time.Now()}); err == nil {
		_ = writeIfChanged(c.st.slicePath(), b, 0o600)
	}
}

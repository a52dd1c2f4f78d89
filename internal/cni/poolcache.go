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
	"bytes"
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

// A view is a file: a JSON header line (range, read time), then one line per change, "+key"
// or "-key", so an ADD or DEL appends a few bytes instead of rewriting a list as long as the
// pool; a read of the pool writes it anew. A line cut short by a crash is skipped: the view
// only misses a change, which costs a retry. (A view of an earlier version is one JSON object
// with its keys in "taken".)
type poolCache struct {
	Range string          `json:"range"`
	Taken map[string]bool `json:"taken,omitempty"`
	Read  time.Time       `json:"read"`
}

// viewCompactSize is the size past which a view is written anew on a change.
const viewCompactSize = 1 << 20

func (s *state) cachePath(pool string) string { return filepath.Join(s.dir, ".pool-"+safeName(pool)) }

// viewOf is the node's view of pool (of spec.range rng), nil when there is none, when it is
// of another range, or in no node-slice mode.
func (c *call) viewOf(pool string, rng netip.Prefix) *poolCache {
	if c.cfg.SliceSize == "" {
		return nil
	}
	pc := c.st.readView(pool)
	if pc == nil || pc.Range != rng.String() {
		return nil
	}
	return pc
}

func (s *state) readView(pool string) *poolCache {
	b, err := os.ReadFile(s.cachePath(pool))
	if err != nil {
		return nil
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	pc := &poolCache{}
	if json.Unmarshal(head, pc) != nil {
		return nil
	}
	if pc.Taken == nil {
		pc.Taken = map[string]bool{}
	}
	for len(rest) > 0 {
		var line []byte
		var ok bool
		if line, rest, ok = bytes.Cut(rest, []byte("\n")); !ok {
			break // cut short
		}
		if len(line) < 2 || !digits(line[1:]) {
			continue
		}
		switch line[0] {
		case '+':
			pc.Taken[string(line[1:])] = true
		case '-':
			delete(pc.Taken, string(line[1:]))
		}
	}
	return pc
}

// digits says whether b is a decimal key: digits, a minus sign first for an offset past
// 2^63 (see Offset).
func digits(b []byte) bool {
	if len(b) > 1 && b[0] == '-' {
		b = b[1:]
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stale says the view is older than poolCacheTTL.
func (pc *poolCache) stale() bool {
	age := time.Since(pc.Read)
	return age > poolCacheTTL || age < 0
}

// keys lists the taken offsets.
func (pc *poolCache) keys() []string {
	out := make([]string, 0, len(pc.Taken))
	for k := range pc.Taken {
		out = append(out, k)
	}
	return out
}

// cachePool records what a read of the pool (nil: it does not exist) showed, and returns it.
func (c *call) cachePool(name, rng string, p *wbv1.IPPool) *poolCache {
	pc := &poolCache{Range: rng, Taken: map[string]bool{}, Read: time.Now()}
	if p != nil {
		if pr, err := netip.ParsePrefix(strings.TrimSpace(p.Spec.Range)); err == nil {
			pc.Range = pr.Masked().String()
		}
		for k := range p.Spec.Allocations {
			pc.Taken[k] = true
		}
	}
	if c.cfg.SliceSize == "" {
		return pc
	}
	// What this node handed out and has not written yet is not in the pool read.
	if recs, err := c.st.pendingRecords(); err == nil {
		for _, r := range recs {
			for _, e := range r.Entries {
				if key, _, ok := e.key(); ok && e.Pool == name && (e.Pending || e.Releasing) {
					pc.Taken[key] = true
				}
			}
		}
	}
	c.st.writeView(name, pc)
	return pc
}

// noteCached adds (or drops) an offset in the view, keeping its read time.
func (c *call) noteCached(pool, rng, key string, taken bool) {
	if c.cfg.SliceSize == "" {
		return
	}
	path := c.st.cachePath(pool)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && taken:
		// The pool is new with this ADD: its whole content is known.
		c.st.writeView(pool, &poolCache{Range: rng, Taken: map[string]bool{key: true}, Read: time.Now()})
		return
	case err != nil:
		return
	case info.Size() > viewCompactSize:
		if pc := c.st.readView(pool); pc != nil {
			if taken {
				pc.Taken[key] = true
			} else {
				delete(pc.Taken, key)
			}
			c.st.writeView(pool, pc)
		}
		return
	}
	op := "-"
	if taken {
		op = "+"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(op + key + "\n")
	_ = f.Close()
}

// writeView writes the view anew: the header, then its keys.
func (s *state) writeView(pool string, pc *poolCache) {
	head, err := json.Marshal(poolCache{Range: pc.Range, Read: pc.Read})
	if err != nil {
		return
	}
	var b bytes.Buffer
	b.Grow(len(head) + 1 + 8*len(pc.Taken))
	b.Write(head)
	b.WriteByte('\n')
	for k := range pc.Taken {
		b.WriteByte('+')
		b.WriteString(k)
		b.WriteByte('\n')
	}
	_ = writeIfChanged(s.cachePath(pool), b.Bytes(), 0o600)
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
		if isTempFile(name) {
			continue
		}
		pc := c.st.readView(name)
		if pc == nil || !pc.stale() {
			continue
		}
		p, err := c.getPool(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.st.Lock(); err != nil {
			return err
		}
		c.cachePool(name, pc.Range, p)
		c.st.Unlock()
	}
	return errors.Join(errs...)
}

// The node's slice changes only when the network is re-sliced or the Node is deleted, and
// rackwire's manager then keeps the old slice from every other node while its pool holds
// addresses, and for --nodeslice-release-grace (2m) after: a slice read a few seconds ago
// is as good as the NodeSlicePool itself. Past sliceCacheTTL the flusher reads it again
// behind the ADDs, which go on with it up to sliceCacheMax; past that, an ADD reads it.
const (
	sliceCacheTTL = 10 * time.Second
	sliceCacheMax = 30 * time.Second
)

// sliceCache is the node's slice as last read, with where it was read from: the
// NodeSlicePool (namespace/name) and the range the NAD had then. It is used only while both
// are this configuration's and the slice lies inside the NAD's range.
type sliceCache struct {
	Slice string    `json:"slice"`
	Pool  string    `json:"pool"`
	Range string    `json:"range"`
	Read  time.Time `json:"read"`
	// Shared is the NodeSlicePool's cniconf.AnnotationSharedWithWhereabouts.
	Shared string `json:"shared,omitempty"`
}

func (s *state) slicePath() string { return filepath.Join(s.dir, ".slice") }

// slicePool is the NodeSlicePool the node's slice is read from, namespace/name.
func (c *call) slicePool() string { return c.kube.namespace + "/" + c.cfg.SliceNetwork() }

// cachedSlice is the node's slice as last read, if it may still be used, and whether it is
// due to be read again.
func (c *call) cachedSlice() (p netip.Prefix, shared string, ok, due bool) {
	b, err := os.ReadFile(c.st.slicePath())
	if err != nil {
		return netip.Prefix{}, "", false, true
	}
	sc := &sliceCache{}
	if json.Unmarshal(b, sc) != nil {
		return netip.Prefix{}, "", false, true
	}
	rng := c.cfg.Ranges[0].Subnet.Masked()
	p, err = netip.ParsePrefix(sc.Slice)
	if err != nil || sc.Pool != c.slicePool() || sc.Range != rng.String() || !inside(p, rng) {
		return netip.Prefix{}, "", false, true
	}
	age := time.Since(sc.Read)
	due = age > sliceCacheTTL || age < 0
	limit := sliceCacheTTL
	if c.refreshedBehind() {
		limit = sliceCacheMax
	}
	if age > limit || age < 0 {
		return netip.Prefix{}, "", false, due
	}
	return p.Masked(), sc.Shared, true, due
}

func (c *call) cacheSlice(p netip.Prefix, shared string) {
	sc := sliceCache{Slice: p.String(), Pool: c.slicePool(), Range: c.cfg.Ranges[0].Subnet.Masked().String(), Read: time.Now(), Shared: shared}
	if b, err := json.Marshal(sc); err == nil {
		_ = writeIfChanged(c.st.slicePath(), b, 0o600)
	}
}

// refreshSlice reads the node's slice again when it is due, for the ADDs that go on with it.
func (c *call) refreshSlice(ctx context.Context) error {
	if _, _, _, due := c.cachedSlice(); !due {
		return nil
	}
	_, _, err := c.readSlice(ctx)
	return err
}

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
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// The pools of one network_name are one address space. whereabouts names an address's
// reservation by network_name and address only, so the reservation is what keeps an address
// to one holder across that network's pools: NADs whose ranges overlap, or a NAD's
// whole-range pool and the node slices it got when node_slice_size was added to it while
// its pods kept their addresses. Once someone deletes that reservation (whereabouts'
// ip-reconciler does, for every network that sets network_name), only the other pool's
// entry still says the address is taken, and the ADD's own pool knows nothing of it.
//
// So the node keeps, beside the claims, the addresses that the network's other pools
// overlapping its own record, read again behind the ADDs as the claims are (claimsTTL,
// claimsMax): a metadata-only list of the pools' namespace, whose pool names carry network
// and range, then a GET of each other pool that may overlap one of the node's. A network
// whose pools do not overlap (one range, or slices of one size) costs the list only. What
// this cannot see, an entry written and its reservation deleted between two reads, is
// closed by the manager's put-back, as for the claims.

type siblings struct {
	Read time.Time `json:"read"`
	// Own is the node's pools the others were read against.
	Own []string `json:"own,omitempty"`
	// Held maps an address to the entries other pools keep for it.
	Held map[string][]siblingEntry `json:"held,omitempty"`
}

type siblingEntry struct {
	Pool        string `json:"pool"`
	ContainerID string `json:"containerID"`
	IfName      string `json:"ifName"`
}

func (s *state) siblingsPath() string { return filepath.Join(s.dir, ".siblings") }

func (c *call) readSiblings() *siblings { return readCached[siblings](c.st.siblingsPath()) }

// siblingAddrs is the addresses of t's range that the network's other pools record for
// other holders, read again first if the node's copy is too old for an ADD to trust or was
// read for other pools than the ADD's.
func (c *call) siblingAddrs(ctx context.Context, t target, all []target) ([]netip.Addr, error) {
	sb := c.readSiblings()
	limit := claimsTTL
	if c.refreshedBehind() {
		limit = claimsMax
	}
	if sb == nil || age(sb.Read) > limit || !slices.Contains(sb.Own, t.pool) {
		var err error
		if sb, err = c.refreshSiblings(ctx, all); err != nil {
			return nil, err
		}
	}
	var out []netip.Addr
	for s, entries := range sb.Held {
		a, err := netip.ParseAddr(s)
		if err != nil || !t.poolRange.Contains(a) {
			continue
		}
		for _, e := range entries {
			if e.Pool != t.pool && (e.ContainerID != c.containerID || e.IfName != c.ifName) {
				out = append(out, a)
				break
			}
		}
	}
	return out, nil
}

// refreshSiblingsBehind reads the other pools again when due, for the ADDs to come.
func (c *call) refreshSiblingsBehind(ctx context.Context) error {
	if sb := c.readSiblings(); sb != nil && age(sb.Read) <= claimsTTL {
		return nil
	}
	own, err := c.targets(ctx)
	if err != nil {
		return err
	}
	_, err = c.refreshSiblings(ctx, own)
	return err
}

// refreshSiblings reads what the network's pools other than own record in own's ranges.
func (c *call) refreshSiblings(ctx context.Context, own []target) (*siblings, error) {
	list := &metav1.PartialObjectMetadataList{}
	path := c.kube.wbPath("ippools", "") + "?resourceVersion=0"
	if err := c.kube.get(withAccept(ctx, metadataListAccept), path, list); err != nil {
		return nil, err
	}
	sb := &siblings{Read: time.Now(), Held: map[string][]siblingEntry{}}
	for _, t := range own {
		sb.Own = append(sb.Own, t.pool)
	}
	names := c.siblingCandidates(list.Items, own)
	pools, err := c.getPools(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("network %q: reading the network's other pools, whose entries an ADD must not hand out: %w", c.cfg.Name, err)
	}
	for i, p := range pools {
		rng, ok := c.siblingRange(names[i], p)
		if !ok {
			continue
		}
		for key, al := range p.Spec.Allocations {
			a, err := AtOffset(rng, key)
			if err != nil || !slices.ContainsFunc(own, func(t target) bool { return t.poolRange.Contains(a) }) {
				continue
			}
			sb.Held[a.String()] = append(sb.Held[a.String()], siblingEntry{Pool: names[i], ContainerID: al.ContainerID, IfName: al.IfName})
		}
	}
	b, err := json.Marshal(sb)
	if err != nil {
		return nil, err
	}
	return sb, writeIfChanged(c.st.siblingsPath(), b, 0o600)
}

// siblingCandidates is the pools among items, other than own's, whose name may be one of
// this network's pools with a range overlapping one of own's: the network_name, a node's
// name in node-slice mode, and the range, joined by "-" (cniconf.PoolName). Node names and
// IPv6 ranges hold "-" too, so every reading of a name counts; the pool read decides
// (siblingRange).
func (c *call) siblingCandidates(items []metav1.PartialObjectMetadata, own []target) []string {
	overlaps := func(r netip.Prefix) bool {
		return slices.ContainsFunc(own, func(t target) bool { return t.poolRange.Overlaps(r) })
	}
	var out []string
	for _, item := range items {
		tail, ok := strings.CutPrefix(item.Name, c.poolPrefix())
		if !ok || slices.ContainsFunc(own, func(t target) bool { return t.pool == item.Name }) {
			continue
		}
		if slices.ContainsFunc(cniconf.RangesInPoolName(tail), overlaps) {
			out = append(out, item.Name)
		}
	}
	return out
}

func (c *call) poolPrefix() string {
	if n := c.cfg.PoolNetwork(); n != "" {
		return n + "-"
	}
	return ""
}

// siblingRange is the range of pool p, named name, when p is one of this network's pools:
// its whole-range pool (the network_name and the range it holds, nothing between), or a
// node's slice pool (the network_name, a node, and a range that lies strictly inside one of
// the network's ranges). Another network whose name is this one's and more ("prod-db"
// beside "prod", a named network beside an unnamed one) has pools of the same shapes; one
// whose range is this network's whole range is told apart, one whose range lies strictly
// inside it is not, as whereabouts does not tell them apart either (the pool names clash
// with the slice pools of a node so named): its entries then only count as taken here.
// Slices are not checked against the NodeSlicePool, which forgets a slice while a pod still
// holds its address (a re-slice, the NAD's node_slice_size removed).
func (c *call) siblingRange(name string, p *wbv1.IPPool) (netip.Prefix, bool) {
	if p == nil {
		return netip.Prefix{}, false
	}
	rng, err := netip.ParsePrefix(p.Spec.Range)
	if err != nil {
		return netip.Prefix{}, false
	}
	rng = rng.Masked()
	if name == PoolName(c.cfg.PoolNetwork(), "", rng) {
		return rng, true
	}
	tail, ok := strings.CutPrefix(name, c.poolPrefix())
	node, sliced := strings.CutSuffix(tail, "-"+cniconf.NormalizeRange(rng.String()))
	if !ok || !sliced || node == "" {
		return netip.Prefix{}, false
	}
	for _, r := range c.cfg.Ranges {
		whole := r.Subnet.Masked()
		if whole.Bits() < rng.Bits() && whole.Contains(rng.Addr()) {
			return rng, true
		}
	}
	return netip.Prefix{}, false
}

// siblingReads is how many pools a refresh reads at once: a network's whole-range NAD beside
// its node slices (a NAD that took node_slice_size while its pods kept their addresses) has
// a pool per node to read.
const siblingReads = 8

// getPools reads the named pools, siblingReads at a time; nil where one is gone.
func (c *call) getPools(ctx context.Context, names []string) ([]*wbv1.IPPool, error) {
	out := make([]*wbv1.IPPool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, siblingReads)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = c.getPool(ctx, name)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

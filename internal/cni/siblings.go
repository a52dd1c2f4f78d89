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
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

func (c *call) readSiblings() *siblings {
	b, err := os.ReadFile(c.st.siblingsPath())
	if err != nil {
		return nil
	}
	sb := &siblings{}
	if json.Unmarshal(b, sb) != nil {
		return nil
	}
	return sb
}

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
	for _, item := range list.Items {
		if slices.Contains(sb.Own, item.Name) || !c.mayOverlap(item.Name, own) {
			continue
		}
		p, err := c.getPool(ctx, item.Name)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		rng, err := netip.ParsePrefix(p.Spec.Range)
		if err != nil {
			continue
		}
		rng = rng.Masked()
		for key, al := range p.Spec.Allocations {
			a, err := AtOffset(rng, key)
			if err != nil || !slices.ContainsFunc(own, func(t target) bool { return t.poolRange.Contains(a) }) {
				continue
			}
			sb.Held[a.String()] = append(sb.Held[a.String()], siblingEntry{Pool: item.Name, ContainerID: al.ContainerID, IfName: al.IfName})
		}
	}
	b, err := json.Marshal(sb)
	if err != nil {
		return nil, err
	}
	return sb, writeIfChanged(c.st.siblingsPath(), b, 0o600)
}

// mayOverlap says whether the IPPool name may be one of this network's pools whose range
// overlaps one of own's. A name is the network_name, a node's name in node-slice mode, and
// the range, joined by "-" (cniconf.PoolName): node names and IPv6 ranges hold "-" too, so
// every way of reading the name counts, and the pool read says the rest.
func (c *call) mayOverlap(name string, own []target) bool {
	rest := name
	if n := c.cfg.PoolNetwork(); n != "" {
		var ok bool
		if rest, ok = strings.CutPrefix(name, n+"-"); !ok {
			return false
		}
	}
	for _, r := range cniconf.RangesInPoolName(rest) {
		if slices.ContainsFunc(own, func(t target) bool { return t.poolRange.Overlaps(r) }) {
			return true
		}
	}
	return false
}

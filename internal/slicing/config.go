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

package slicing

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// IPAM types whose configuration may ask for node slices.
var ipamTypes = map[string]bool{"whereabouts": true, "rackwire": true}

// ErrNotSliced means a CNI configuration does not ask for node slices (another IPAM, or
// whereabouts without node_slice_size): nothing to do, nothing to report.
var ErrNotSliced = errors.New("no node_slice_size in a whereabouts or rackwire IPAM configuration")

// Network is what a NAD's configuration says about its network's slices.
type Network struct {
	// Name names the network and its NodeSlicePool: network_name, else the config's name.
	Name string
	// Named says the name is network_name: whereabouts then prefixes its per-node IPPool
	// names with it.
	Named bool
	// Range is the range as whereabouts writes it into NodeSlicePool spec.range (the
	// network address in CIDR notation).
	Range netip.Prefix
	// SliceSize is node_slice_size as written, for spec.sliceSize.
	SliceSize string
	// SliceBits is the slices' prefix length.
	SliceBits int
	// Start and End bound the addresses handed out (range_start, range_end, or the
	// "start-end/cidr" form of range); invalid when unbounded.
	Start, End netip.Addr
	// Exclude lists the excluded prefixes.
	Exclude []netip.Prefix
}

type ipamConf struct {
	Type        string      `json:"type"`
	NetworkName string      `json:"network_name"`
	SliceSize   string      `json:"node_slice_size"`
	Range       string      `json:"range"`
	RangeStart  string      `json:"range_start"`
	RangeEnd    string      `json:"range_end"`
	Exclude     []string    `json:"exclude"`
	IPRanges    []rangeConf `json:"ipRanges"`
}

type rangeConf struct {
	Range      string   `json:"range"`
	RangeStart string   `json:"range_start"`
	RangeEnd   string   `json:"range_end"`
	Exclude    []string `json:"exclude"`
}

type pluginConf struct {
	Name    string       `json:"name"`
	Type    string       `json:"type"`
	IPAM    *ipamConf    `json:"ipam"`
	Plugins []pluginConf `json:"plugins"`
}

// ParseNetwork reads a NAD's spec.config: a single plugin configuration or a conflist whose
// plugin with a whereabouts or rackwire IPAM has node_slice_size. It returns ErrNotSliced
// for configurations that do not ask for node slices, and an error naming the field for
// those that ask but are wrong; Name is set even then when the network can be named, so
// that the error can be reported on the network's pool.
func ParseNetwork(config []byte) (Network, error) {
	var top pluginConf
	if err := json.Unmarshal(config, &top); err != nil {
		return Network{}, fmt.Errorf("config: not a CNI configuration: %w", err)
	}
	ipam, path := top.IPAM, "ipam"
	for i := range top.Plugins {
		if p := top.Plugins[i].IPAM; p != nil && ipamTypes[p.Type] && p.SliceSize != "" {
			ipam, path = p, fmt.Sprintf("plugins[%d].ipam", i)
			break
		}
	}
	if ipam == nil || !ipamTypes[ipam.Type] || ipam.SliceSize == "" {
		return Network{}, ErrNotSliced
	}
	n := Network{Name: ipam.NetworkName, Named: ipam.NetworkName != "", SliceSize: ipam.SliceSize}
	if n.Name == "" {
		n.Name = top.Name
	}
	if n.Name == "" {
		return n, fmt.Errorf("%s.network_name: neither it nor the configuration's name is set", path)
	}
	bits, err := ParseSliceSize(ipam.SliceSize)
	if err != nil {
		return n, fmt.Errorf("%s.node_slice_size: %w", path, err)
	}
	n.SliceBits = bits
	r := rangeConf{Range: ipam.Range, RangeStart: ipam.RangeStart, RangeEnd: ipam.RangeEnd, Exclude: ipam.Exclude}
	rpath := path
	if r.Range == "" {
		if len(ipam.IPRanges) == 0 {
			return n, fmt.Errorf("%s.range: node slices need a range", path)
		}
		// whereabouts slices only the first range.
		r, rpath = ipam.IPRanges[0], path+".ipRanges[0]"
	}
	if err := n.readRange(r, rpath); err != nil {
		return n, err
	}
	if err := n.Check(); err != nil {
		return n, fmt.Errorf("%s.%w", path, err)
	}
	return n, nil
}

func (n *Network) readRange(r rangeConf, path string) error {
	rng, err := cniconf.ParseRange(r.Range, r.RangeStart, r.RangeEnd, r.Exclude)
	if err != nil {
		return fmt.Errorf("%s.%w", path, err)
	}
	n.Range, n.Start, n.End, n.Exclude = rng.Subnet, rng.Start, rng.End, rng.Exclude
	return nil
}

// Check reports what makes the network unsliceable: a slice size that does not fit the
// range, bounds outside it or of the other family.
func (n Network) Check() error {
	if _, err := NewGrid(n.Range, n.SliceBits); err != nil {
		return fmt.Errorf("node_slice_size: %w", err)
	}
	if n.Start.IsValid() && !n.Range.Contains(n.Start) {
		return fmt.Errorf("range_start: %s is outside %s", n.Start, n.Range)
	}
	if n.End.IsValid() && !n.Range.Contains(n.End) {
		return fmt.Errorf("range_end: %s is outside %s", n.End, n.Range)
	}
	if n.Start.IsValid() && n.End.IsValid() && n.End.Less(n.Start) {
		return fmt.Errorf("range_end: %s is below range_start %s", n.End, n.Start)
	}
	for i, x := range n.Exclude {
		if x.Addr().Is4() != n.Range.Addr().Is4() {
			return fmt.Errorf("exclude[%d]: %s is not of the range's address family", i, x)
		}
	}
	return nil
}

// SameSlicing says whether two NADs of one network agree (range, bounds, exclusions and
// slice size, by value: "/28" and "28" agree).
func (n Network) SameSlicing(o Network) bool {
	if n.Range != o.Range || n.SliceBits != o.SliceBits || n.Start != o.Start || n.End != o.End || len(n.Exclude) != len(o.Exclude) {
		return false
	}
	for i := range n.Exclude {
		if n.Exclude[i] != o.Exclude[i] {
			return false
		}
	}
	return true
}

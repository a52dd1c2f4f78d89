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
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/slicing"
)

// PluginType is the ipam type the binary answers to.
const PluginType = "rackwire"

// Defaults of the keys rackwire adds to whereabouts'.
const (
	DefaultStateDir = "/var/lib/cni/rackwire"
	DefaultTimeout  = 60 * time.Second
)

// flatFiles are where whereabouts looks for the flat-file fallback, rackwire's own first
// (the DaemonSet writes it): keys the NAD does not set are read from the first one found.
var flatFiles = []string{
	"/etc/cni/net.d/rackwire.d/rackwire.conf",
	"/etc/kubernetes/cni/net.d/whereabouts.d/whereabouts.conf",
	"/etc/cni/net.d/whereabouts.d/whereabouts.conf",
	"/host/etc/cni/net.d/whereabouts.d/whereabouts.conf",
}

// Range is one range of a network: addresses Start..End of Subnet (both bounds optional)
// minus Exclude.
type Range = cniconf.Range

// Static is an address of the addresses key, returned as written and never recorded (as
// whereabouts does).
type Static struct {
	Address netip.Prefix
	Gateway netip.Addr
}

// Config is a network's IPAM configuration, flat file merged in.
type Config struct {
	// Name is the CNI network's name (the configuration's name).
	Name       string
	CNIVersion string
	// NetworkName is network_name: it prefixes the whereabouts objects' names.
	NetworkName string
	Ranges      []Range
	// Gateways holds at most one gateway per family; a gateway is never handed out.
	Gateways []netip.Addr
	Routes   []*types.Route
	DNS      types.DNS
	Static   []Static
	// SliceSize is node_slice_size: allocate inside the node's slice of Ranges[0].
	SliceSize          string
	Kubeconfig         string
	ConfigurationPath  string
	AllowPersistentIPs bool
	StateDir           string
	Timeout            time.Duration
	LogFile            string
	// SleepForRace is whereabouts' sleep_for_race: seconds between reserving an address and
	// recording it in the pool, for tests that cut the apiserver off mid-ADD.
	SleepForRace int
	// WhereaboutsLease takes whereabouts' Lease for every verb: for networks shared with
	// whereabouts binaries.
	WhereaboutsLease bool
	// FlatFile is the flat file whose keys were merged, if any.
	FlatFile string
	// OverlappingRanges is enable_overlapping_ranges (default true, as whereabouts): false
	// writes no reservation, and the pool entry is the only lock (written before ADD answers).
	OverlappingRanges bool
	// Warnings are what was read and ignored (unknown keys of the flat file), for the log.
	Warnings []string
}

// ConfigError is a configuration problem, naming the key.
type ConfigError struct {
	Key    string
	Detail string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Detail }

func keyErr(key, format string, args ...any) error {
	return &ConfigError{Key: key, Detail: fmt.Sprintf(format, args...)}
}

// ipamKeys are the keys of the ipam section rackwire reads. whereabouts' tuning keys
// that mean nothing without its Lease (leader_*, the reconciler's
// schedule) are accepted, so a NAD moves over by changing its type alone, and ignored.
var ipamKeys = map[string]bool{
	"type": true, "range": true, "range_start": true, "range_end": true, "exclude": true,
	"ipRanges": true, "network_name": true, "node_slice_size": true, "gateway": true,
	"routes": true, "dns": true, "kubernetes": true, "configuration_path": true,
	"addresses": true, "log_file": true, "log_level": true, "enable_overlapping_ranges": true,
	"leader_lease_duration": true, "leader_renew_deadline": true, "leader_retry_period": true,
	"reconciler_cron_expression": true, "sleep_for_race": true, "datastore": true,
	// rackwire's own.
	"allowPersistentIPs": true, "state_dir": true, "timeout": true, "whereabouts_lease": true,
}

var rangeKeys = map[string]bool{"range": true, "range_start": true, "range_end": true, "exclude": true}

// ParseConfig reads the configuration the runtime passes on stdin. Keys the NAD's ipam
// section lacks are taken from the first flat file found (configuration_path first).
func ParseConfig(stdin []byte) (*Config, error) {
	return parseConfig(stdin, flatFiles)
}

func parseConfig(stdin []byte, flat []string) (*Config, error) {
	var top struct {
		CNIVersion         string                     `json:"cniVersion"`
		Name               string                     `json:"name"`
		AllowPersistentIPs *bool                      `json:"allowPersistentIPs"`
		IPAM               map[string]json.RawMessage `json:"ipam"`
	}
	if err := json.Unmarshal(stdin, &top); err != nil {
		return nil, fmt.Errorf("the network configuration is not JSON: %w", err)
	}
	if top.IPAM == nil {
		return nil, keyErr("ipam", "missing")
	}
	c := &Config{Name: top.Name, CNIVersion: top.CNIVersion}
	if top.AllowPersistentIPs != nil {
		c.AllowPersistentIPs = *top.AllowPersistentIPs
	}
	keys := top.IPAM
	if err := checkKeys("ipam", keys, ipamKeys); err != nil {
		return nil, err
	}
	var cp string
	if err := str(keys, "ipam", "configuration_path", &cp); err != nil {
		return nil, err
	}
	if err := confine("ipam.configuration_path", cp, AllowedRoots.Config, false); err != nil {
		return nil, err
	}
	files := flat
	if cp != "" {
		files = append([]string{cp}, flat...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading flat file %s: %w", f, err)
		}
		var fk map[string]json.RawMessage
		if err := json.Unmarshal(b, &fk); err != nil {
			return nil, fmt.Errorf("flat file %s is not a JSON object: %w", f, err)
		}
		// The flat file is the node's, shared by every network and written by whereabouts'
		// installer too: a key rackwire does not know is ignored and logged, as whereabouts
		// ignores them, rather than failing every network of the node.
		for k, v := range fk {
			if !ipamKeys[k] {
				c.Warnings = append(c.Warnings, fmt.Sprintf("flat file %s: unknown key %q ignored", f, k))
				continue
			}
			// whereabouts takes enable_overlapping_ranges from the NAD alone.
			if _, set := keys[k]; !set && k != "enable_overlapping_ranges" {
				keys[k] = v
			}
		}
		sort.Strings(c.Warnings)
		c.FlatFile = f
		break
	}
	if err := c.read(keys); err != nil {
		return nil, err
	}
	return c, nil
}

func checkKeys(path string, m map[string]json.RawMessage, known map[string]bool) error {
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return keyErr(path+"."+unknown[0], "unknown key (rackwire reads whereabouts' keys; see docs/cni-plugin.md)")
}

func str(m map[string]json.RawMessage, path, key string, to *string) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, to); err != nil {
		return keyErr(path+"."+key, "must be a string")
	}
	return nil
}

func decode(m map[string]json.RawMessage, path, key string, to any, want string) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, to); err != nil {
		return keyErr(path+"."+key, "must be %s", want)
	}
	return nil
}

func (c *Config) read(k map[string]json.RawMessage) error {
	const p = "ipam"
	var typ, datastore, timeout, gateway string
	var ovl *bool
	var kube struct {
		Kubeconfig string `json:"kubeconfig"`
		APIRoot    string `json:"k8s_api_root"`
	}
	var persistent *bool
	var ranges []map[string]json.RawMessage
	var addresses []struct {
		Address string `json:"address"`
		Gateway string `json:"gateway"`
	}
	for _, d := range []struct {
		key  string
		to   any
		want string
	}{
		{"type", &typ, "a string"}, {"network_name", &c.NetworkName, "a string"},
		{"node_slice_size", &c.SliceSize, "a string such as \"/28\""}, {"gateway", &gateway, "a string"},
		{"routes", &c.Routes, "a list of {dst, gw}"}, {"dns", &c.DNS, "a DNS object"},
		{"kubernetes", &kube, "an object with kubeconfig"}, {"configuration_path", &c.ConfigurationPath, "a string"},
		{"addresses", &addresses, "a list of {address, gateway}"}, {"log_file", &c.LogFile, "a string"},
		{"enable_overlapping_ranges", &ovl, "true or false"}, {"datastore", &datastore, "a string"},
		{"allowPersistentIPs", &persistent, "true or false"}, {"state_dir", &c.StateDir, "a string"},
		{"timeout", &timeout, "a duration such as \"30s\""}, {"sleep_for_race", &c.SleepForRace, "a number of seconds"},
		{"whereabouts_lease", &c.WhereaboutsLease, "true or false"}, {"ipRanges", &ranges, "a list of ranges"},
	} {
		if err := decode(k, p, d.key, d.to, d.want); err != nil {
			return err
		}
	}
	if typ != PluginType {
		return keyErr(p+".type", "is %q; this plugin is %q", typ, PluginType)
	}
	if datastore != "" && datastore != "kubernetes" {
		return keyErr(p+".datastore", "%q is not supported: rackwire stores in the Kubernetes API only", datastore)
	}
	if persistent != nil {
		c.AllowPersistentIPs = c.AllowPersistentIPs || *persistent
	}
	c.OverlappingRanges = ovl == nil || *ovl
	c.Kubeconfig = kube.Kubeconfig
	if c.Kubeconfig == "" {
		return keyErr(p+".kubernetes.kubeconfig", "missing: rackwire needs a kubeconfig (the DaemonSet writes one into /etc/cni/net.d/rackwire.d/)")
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	c.Timeout = DefaultTimeout
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return keyErr(p+".timeout", "%q is not a positive duration", timeout)
		}
		c.Timeout = d
	}
	// The top-level range comes first, as in whereabouts.
	if _, ok := k["range"]; ok {
		top := map[string]json.RawMessage{}
		for key := range rangeKeys {
			if v, ok := k[key]; ok {
				top[key] = v
			}
		}
		r, err := readRange(top, p)
		if err != nil {
			return err
		}
		c.Ranges = append(c.Ranges, r)
	} else {
		for _, key := range []string{"range_start", "range_end", "exclude"} {
			if _, ok := k[key]; ok {
				return keyErr(p+"."+key, "set without ipam.range")
			}
		}
	}
	for i, rm := range ranges {
		path := fmt.Sprintf("%s.ipRanges[%d]", p, i)
		if err := checkKeys(path, rm, rangeKeys); err != nil {
			return err
		}
		r, err := readRange(rm, path)
		if err != nil {
			return err
		}
		c.Ranges = append(c.Ranges, r)
	}
	if len(c.Ranges) == 0 && len(addresses) == 0 {
		return keyErr(p+".range", "missing: set range or ipRanges")
	}
	if gateway != "" {
		g, err := netip.ParseAddr(strings.TrimSpace(gateway))
		if err != nil {
			return keyErr(p+".gateway", "%q is not an IP address", gateway)
		}
		g = g.Unmap()
		found := false
		for _, r := range c.Ranges {
			found = found || r.Subnet.Contains(g)
		}
		if !found {
			return keyErr(p+".gateway", "%s is in none of the ranges", g)
		}
		c.Gateways = append(c.Gateways, g)
	}
	for i, a := range addresses {
		pr, err := netip.ParsePrefix(a.Address)
		if err != nil {
			return keyErr(fmt.Sprintf("%s.addresses[%d].address", p, i), "%q is not an address in CIDR notation", a.Address)
		}
		s := Static{Address: pr}
		if a.Gateway != "" {
			if s.Gateway, err = netip.ParseAddr(a.Gateway); err != nil {
				return keyErr(fmt.Sprintf("%s.addresses[%d].gateway", p, i), "%q is not an IP address", a.Gateway)
			}
		}
		c.Static = append(c.Static, s)
	}
	if c.SliceSize != "" {
		bits, err := slicing.ParseSliceSize(c.SliceSize)
		if err != nil {
			return keyErr(p+".node_slice_size", "%v", err)
		}
		if len(c.Ranges) == 0 {
			return keyErr(p+".node_slice_size", "needs a range to slice")
		}
		if _, err := slicing.NewGrid(c.Ranges[0].Subnet, bits); err != nil {
			return keyErr(p+".node_slice_size", "%v", err)
		}
	}
	for _, x := range []struct {
		key, path string
		roots     []string
		dirOK     bool
	}{
		{p + ".log_file", c.LogFile, AllowedRoots.Log, false},
		{p + ".kubernetes.kubeconfig", c.Kubeconfig, AllowedRoots.Config, false},
	} {
		if err := confine(x.key, x.path, x.roots, x.dirOK); err != nil {
			return err
		}
	}
	if err := confineState(p+".state_dir", c.StateDir, AllowedRoots.State); err != nil {
		return err
	}
	if err := c.checkOldVersion(); err != nil {
		return err
	}
	if c.SliceSize != "" && len(c.Ranges) > 1 {
		return keyErr(p+".ipRanges", "node_slice_size slices one range; this network has %d", len(c.Ranges))
	}
	return nil
}

func readRange(m map[string]json.RawMessage, path string) (Range, error) {
	var rs, start, end string
	var exclude []string
	for _, d := range []struct {
		key string
		to  any
	}{{"range", &rs}, {"range_start", &start}, {"range_end", &end}} {
		if err := decode(m, path, d.key, d.to, "a string"); err != nil {
			return Range{}, err
		}
	}
	if err := decode(m, path, "exclude", &exclude, "a list of CIDRs"); err != nil {
		return Range{}, err
	}
	r, err := cniconf.ParseRange(rs, start, end, exclude)
	if err != nil {
		// cniconf names the key relative to the range: "range_start: ...".
		key, detail, _ := strings.Cut(err.Error(), ": ")
		return r, keyErr(path+"."+key, "%s", detail)
	}
	return r, nil
}

// PoolNetwork is what whereabouts' object names are prefixed with: network_name, empty when
// unset (whereabouts' unnamed network).
func (c *Config) PoolNetwork() string { return c.NetworkName }

// SliceNetwork names the network's NodeSlicePool: network_name, else the configuration's name.
func (c *Config) SliceNetwork() string {
	if c.NetworkName != "" {
		return c.NetworkName
	}
	return c.Name
}

// checkOldVersion refuses, as whereabouts does, more than one address of a family in spec
// versions before 0.3.0 (none given counts as such), whose results hold one of each.
func (c *Config) checkOldVersion() error {
	switch c.CNIVersion {
	case "", "0.1.0", "0.2.0":
	default:
		return nil
	}
	var v4, v6 int
	count := func(a netip.Addr) {
		if a.Is4() {
			v4++
		} else {
			v6++
		}
	}
	for _, r := range c.Ranges {
		count(r.Subnet.Addr())
	}
	for _, s := range c.Static {
		count(s.Address.Addr())
	}
	if v4 > 1 || v6 > 1 {
		return keyErr("cniVersion", "%q does not support more than one address per family (%d IPv4, %d IPv6): use 0.3.0 or later", c.CNIVersion, v4, v6)
	}
	return nil
}

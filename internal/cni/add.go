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
	"net"
	"net/netip"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
)

// call is one invocation of the plugin.
type call struct {
	cfg  *Config
	kube *kube
	st   *state
	// legacy is the network's directory of the old layout, if any (see legacy.go).
	legacy              *state
	node                string
	containerID, ifName string
	podNS, podName      string
	podUID              string
	requested           []netip.Addr
	// targetsAll is the ADD's pools, all of them (siblings.go).
	targetsAll []target
	// wrote is how long the last flush's pool writes took, wroteSmall whether every pool
	// it wrote was small, and lastMarked the newest marker of the entries it took (flusher
	// only).
	wrote      time.Duration
	wroteSmall bool
	lastMarked time.Time
}

// newCall reads the configuration and arguments of an invocation.
func newCall(args *skel.CmdArgs) (*call, error) {
	cfg, err := ParseConfig(args.StdinData)
	if err != nil {
		return nil, err
	}
	warn(cfg)
	// Names that are not UTF-8 never get here from ADD, CHECK or DEL (storedNames): as given
	// they are what the records and the pool keep.
	c := &call{cfg: cfg, containerID: args.ContainerID, ifName: args.IfName}
	if err := c.readArgs(args.Args, args.StdinData); err != nil {
		return nil, err
	}
	if c.node, err = nodeName(); err != nil {
		return nil, err
	}
	if c.kube, err = newKube(cfg.Kubeconfig); err != nil {
		return nil, err
	}
	if c.st, err = openState(cfg, c.node, c.kube.namespace); err != nil {
		return nil, err
	}
	c.legacy = legacyState(cfg, c.node)
	// A verb answers a runtime: its waits for the node's lock end with the network's timeout,
	// counted from now as the verb's own is, and it then fails saying so. The flusher,
	// answering no one, waits for good.
	c.st.lockBy = time.Now().Add(cfg.Timeout)
	if c.legacy != nil {
		c.legacy.lockBy = c.st.lockBy
	}
	return c, nil
}

// readArgs reads CNI_ARGS (K8S_POD_*, IP) and the requested addresses of the ips capability
// (runtimeConfig.ips) and of args.cni.ips.
func (c *call) readArgs(cniArgs string, stdin []byte) error {
	var ips []string
	for _, kv := range strings.Split(cniArgs, ";") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("CNI_ARGS: %q is not KEY=VALUE", kv)
		}
		switch k {
		case "K8S_POD_NAME":
			c.podName = v
		case "K8S_POD_NAMESPACE":
			c.podNS = v
		case "K8S_POD_UID":
			c.podUID = v
		case "IP":
			for _, s := range strings.Split(v, ",") {
				ips = append(ips, strings.TrimSpace(s))
			}
		}
	}
	var extra struct {
		RuntimeConfig struct {
			IPs []string `json:"ips"`
		} `json:"runtimeConfig"`
		Args struct {
			CNI struct {
				IPs []string `json:"ips"`
			} `json:"cni"`
		} `json:"args"`
	}
	if err := json.Unmarshal(stdin, &extra); err != nil {
		return fmt.Errorf("runtimeConfig.ips: %w", err)
	}
	ips = append(ips, extra.RuntimeConfig.IPs...)
	ips = append(ips, extra.Args.CNI.IPs...)
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			p, perr := netip.ParsePrefix(s)
			if perr != nil {
				return fmt.Errorf("ips: %q is not an IP address", s)
			}
			a = p.Addr()
		}
		c.requested = append(c.requested, a.Unmap())
	}
	return nil
}

// nodeName is whereabouts': NODENAME, else the nodename file the DaemonSet writes, else
// the host name.
func nodeName() (string, error) {
	if n := strings.TrimSpace(os.Getenv("NODENAME")); n != "" {
		return n, nil
	}
	for _, f := range []string{"/etc/cni/net.d/rackwire.d/nodename", "/etc/hostname"} {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b)), nil
		}
	}
	return os.Hostname()
}

// wanted is the requested address that falls in r, if any.
func (c *call) wanted(r Range) netip.Addr {
	for _, a := range c.requested {
		if r.Subnet.Contains(a) {
			return a
		}
	}
	return netip.Addr{}
}

// storedNames refuses an attachment's names that are not UTF-8. JSON keeps each such byte as
// U+FFFD, in the pool entry and the reservation as in the record: "net\xe9", "net\xea" and
// "net\uFFFD" of one pod would be one holder there, and the DEL of one would free the
// others' addresses.
func storedNames(args *skel.CmdArgs) error {
	for _, n := range []struct{ env, v string }{{"CNI_CONTAINERID", args.ContainerID}, {"CNI_IFNAME", args.IfName}} {
		if !utf8.ValidString(n.v) {
			return fmt.Errorf("%s %q is not valid UTF-8: IPPool entries and reservations keep names as JSON text, where it would be the same name as others'; use a UTF-8 name", n.env, n.v)
		}
	}
	return nil
}

// Add is the ADD verb.
func Add(args *skel.CmdArgs) error {
	if err := storedNames(args); err != nil {
		return err
	}
	c, err := newCall(args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	res, err := c.add(ctx)
	if err != nil {
		return err
	}
	if c.deferred() {
		if err := c.kickFlusher(args.StdinData); err != nil {
			return err
		}
	}
	return types.PrintResult(res, c.cfg.CNIVersion)
}

func (c *call) add(ctx context.Context) (*current.Result, error) {
	for _, a := range c.requested {
		found := false
		for _, r := range c.cfg.Ranges {
			found = found || r.Subnet.Contains(a)
		}
		if !found {
			return nil, fmt.Errorf("ips: %s is in none of network %q's ranges", a, c.cfg.Name)
		}
	}
	if c.cfg.AllowPersistentIPs {
		sel, err := c.selected(ctx)
		if err != nil {
			return nil, err
		}
		claim, err := c.claimOf(ctx, sel)
		if err != nil {
			return nil, err
		}
		if claim != "" {
			return c.addFromClaim(ctx, claim, sel)
		}
	}
	// The pools are resolved before the node's lock: only what writes queues on it.
	targets, err := c.targets(ctx)
	if err != nil {
		return nil, err
	}
	c.targetsAll = targets
	if err := c.st.Lock(); err != nil {
		return nil, err
	}
	defer c.st.Unlock()
	if c.cfg.WhereaboutsLease && len(targets) > 0 {
		giveBack, err := c.takeLease(ctx, c.leaseName(targets[0].pool))
		if err != nil {
			return nil, err
		}
		defer giveBack()
	}
	rec, err := c.st.load(c.containerID, c.ifName)
	if err == nil && rec != nil && releasing(rec) {
		rec, err = c.afterRelease(ctx, rec)
	}
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &record{ContainerID: c.containerID, IfName: c.ifName, PodRef: c.podRef(), PodUID: c.podUID, Network: c.cfg.Name, Gen: newGen()}
	}
	res := &current.Result{CNIVersion: current.ImplementedSpecVersion, Routes: c.cfg.Routes, DNS: c.cfg.DNS}
	for _, t := range targets {
		addr, err := c.allocate(ctx, t, c.wanted(t.rng), rec)
		if err != nil {
			if !errors.Is(err, errReleasedMeanwhile) && !errors.Is(err, errLeftToItsRelease) {
				c.rollback(rec)
			}
			if isExhausted(err) {
				c.event("AddressesExhausted", err.Error())
			}
			return nil, err
		}
		res.IPs = append(res.IPs, c.ipConfig(addr, t.rng.Subnet.Bits()))
	}
	for _, s := range c.cfg.Static {
		res.IPs = append(res.IPs, &current.IPConfig{Address: ipNet(s.Address.Addr(), s.Address.Bits()), Gateway: ip(s.Gateway)})
	}
	return res, nil
}

// rollback undoes an ADD that failed for certain (no address, a refused request): what is
// left, if the apiserver cannot be reached now, stays in the record for DEL or GC.
func (c *call) rollback(rec *record) {
	ctx, cancel := context.WithTimeout(context.Background(), requestWait)
	defer cancel()
	_ = c.release(ctx, rec)
}

func (c *call) ipConfig(a netip.Addr, bits int) *current.IPConfig {
	cfg := &current.IPConfig{Address: ipNet(a, bits)}
	for _, g := range c.cfg.Gateways {
		if g.Is4() == a.Is4() {
			cfg.Gateway = ip(g)
		}
	}
	return cfg
}

func ipNet(a netip.Addr, bits int) net.IPNet {
	return net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(bits, a.BitLen())}
}

func ip(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return a.AsSlice()
}

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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// Check is the CHECK verb: every address of prevResult that rackwire handed out is still
// this attachment's, in its pool entry and its reservation (or still its IPAMClaim's); an
// entry still to be written behind counts unless its last write was refused for certain.
func Check(args *skel.CmdArgs) error {
	if err := storedNames(args); err != nil {
		return err
	}
	c, err := newCall(args)
	if err != nil {
		return err
	}
	conf := &types.PluginConf{}
	if err := json.Unmarshal(args.StdinData, conf); err != nil {
		return err
	}
	if err := version.ParsePrevResult(conf); err != nil {
		return fmt.Errorf("prevResult: %w", err)
	}
	if conf.PrevResult == nil {
		return fmt.Errorf("prevResult: missing")
	}
	prev, err := current.NewResultFromResult(conf.PrevResult)
	if err != nil {
		return fmt.Errorf("prevResult: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	if err := c.st.Lock(); err != nil {
		return err
	}
	defer c.st.Unlock()
	rec, err := c.st.load(c.containerID, c.ifName)
	if err == nil && rec == nil && c.legacy != nil {
		// Added before the upgrade: its record is where that version wrote it (legacy.go).
		// Read without the old directory's lock: CHECK writes nothing, and a record is
		// replaced whole (state.save).
		rec, err = c.legacy.load(c.containerID, c.ifName)
	}
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("network %q, node %s: no allocation of container %s, interface %s", c.cfg.Name, c.node, c.containerID, c.ifName)
	}
	var ips []netip.Addr
	for _, ipc := range prev.IPs {
		a, ok := netip.AddrFromSlice(ipc.Address.IP)
		if ok && c.inRanges(a.Unmap()) {
			ips = append(ips, a.Unmap())
		}
	}
	if rec.Claim != "" {
		return c.checkClaim(ctx, rec.Claim, ips)
	}
	for _, a := range ips {
		if err := c.checkAddress(ctx, rec, a); err != nil {
			return err
		}
	}
	return nil
}

func (c *call) inRanges(a netip.Addr) bool {
	for _, r := range c.cfg.Ranges {
		if r.Subnet.Contains(a) {
			return true
		}
	}
	return false
}

func (c *call) checkAddress(ctx context.Context, rec *record, a netip.Addr) error {
	i := slices.IndexFunc(rec.Entries, func(e entry) bool { return e.Address == a.String() })
	if i < 0 {
		return fmt.Errorf("%s: not allocated to container %s, interface %s", a, c.containerID, c.ifName)
	}
	e := rec.Entries[i]
	if e.Pending && e.Refused != "" {
		// The flusher's write of it was turned down for certain: the pool does not record
		// it, and whatever reads the pool takes the address for free.
		return fmt.Errorf("%s: not in IPPool %s: its entry for container %s, interface %s was refused (%d tries): %s",
			a, e.Pool, c.containerID, c.ifName, e.Tries, e.Refused)
	}
	if !e.Pending {
		pool, err := c.getPool(ctx, e.Pool)
		if err != nil {
			return err
		}
		pr, err := netip.ParsePrefix(e.Range)
		if err != nil {
			return err
		}
		if pool == nil {
			return fmt.Errorf("%s: IPPool %s is gone", a, e.Pool)
		}
		al, ok := pool.Spec.Allocations[Offset(pr, a)]
		if !ok || al.ContainerID != c.containerID || al.IfName != c.ifName {
			return fmt.Errorf("%s: IPPool %s no longer records it for container %s, interface %s", a, e.Pool, c.containerID, c.ifName)
		}
	}
	if !c.cfg.OverlappingRanges {
		return nil // no reservation is written
	}
	orip := &wbv1.OverlappingRangeIPReservation{}
	if err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", e.Reservation), orip); err != nil {
		return fmt.Errorf("%s: reservation %s: %w", a, e.Reservation, err)
	}
	if !c.ownsReservation(orip) {
		return fmt.Errorf("%s: reservation %s belongs to %s", a, e.Reservation, c.holderName(orip.Spec.PodRef))
	}
	return nil
}

// GC is the GC verb: it releases every attachment this node's rackwire recorded on the
// network that is not in cni.dev/valid-attachments.
func GC(args *skel.CmdArgs) error {
	c, err := newCall(args)
	if err != nil {
		return err
	}
	conf := &types.PluginConf{}
	if err := json.Unmarshal(args.StdinData, conf); err != nil {
		return err
	}
	valid := map[[2]string]bool{}
	for _, a := range conf.ValidAttachments {
		valid[[2]string{a.ContainerID, a.IfName}] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	if err := c.st.Lock(); err != nil {
		return err
	}
	// Another NAD of the same pools (another configuration name) shares the directory: its
	// attachments are not in this GC's valid list, and are its own GC's to release.
	err = c.gcRecords(ctx, valid, func(r *record) bool { return r.Network == "" || r.Network == c.cfg.Name })
	c.st.Unlock()
	if err != nil {
		return err
	}
	return c.gcLegacy(ctx, valid)
}

// gcRecords releases the records of c.st, its lock held, that are not valid and that ours
// (when set) accepts.
func (c *call) gcRecords(ctx context.Context, valid map[[2]string]bool, ours func(*record) bool) error {
	recs, err := c.st.all()
	if err != nil {
		return err
	}
	for _, seen := range recs {
		if valid[[2]string{seen.ContainerID, seen.IfName}] || (ours != nil && !ours(seen)) {
			continue
		}
		// What recs holds may be old by now: a wait for the flusher lets go of the lock.
		r, err := c.settled(ctx, seen)
		if err != nil {
			return err
		}
		if r == nil {
			continue
		}
		gone := *c
		gone.containerID, gone.ifName = r.ContainerID, r.IfName
		gone.podNS, gone.podName, _ = strings.Cut(r.PodRef, "/")
		if err := gone.release(ctx, r); err != nil {
			return fmt.Errorf("releasing %s: %w", describe(r), err)
		}
	}
	return nil
}

// Status is the STATUS verb: ready when the apiserver answers for the objects ADD writes.
func Status(args *skel.CmdArgs) error {
	cfg, err := ParseConfig(args.StdinData)
	if err != nil {
		return types.NewError(types.ErrInvalidNetworkConfig, "invalid configuration", err.Error())
	}
	k, err := newKube(cfg.Kubeconfig)
	if err != nil {
		return types.NewError(types.ErrInvalidNetworkConfig, "invalid kubeconfig", err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestWait)
	defer cancel()
	if err := k.once(ctx, "GET", k.wbPath("ippools", "")+"?limit=1", "", nil, nil); err != nil {
		return types.NewError(errPluginNotAvailable, "the Kubernetes API does not answer", err.Error())
	}
	return nil
}

// errPluginNotAvailable is the spec's well-known code 50 ("the plugin is not available"),
// which cni v1.3.0 does not name.
const errPluginNotAvailable uint = 50

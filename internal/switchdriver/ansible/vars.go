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

package ansible

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/netip"
	"slices"
	"strings"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/openflow"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/vlan"
)

// Actions that the network-runner role lacks; a switch OS has one when rackwire ships
// playbooks/providers/<os>/<action>.yaml.
const (
	actionACL      = "conf_acl"
	actionState    = "set_port_state"
	actionRecord   = "record_port"
	actionReadPort = "read_ports"
	actionCheck    = "check"
)

func (d *Driver) supports(action string) bool {
	_, err := fs.Stat(d.config.Playbooks, "providers/"+d.target.os+"/"+action+".yaml")
	return err == nil
}

// portVars is one entry of rackwire_changes in apply.yaml; a nil field leaves its step out.
type portVars struct {
	Port        string   `json:"port"`
	Description string   `json:"description"`
	Mode        string   `json:"mode"` // access or trunk
	Untagged    *int     `json:"untagged"`
	Trunked     []int    `json:"trunked"`
	ACL         *aclVars `json:"acl"`
	State       bool     `json:"state"`
	Disabled    bool     `json:"disabled"`
	Record      *string  `json:"record"`
}

type aclVars struct {
	Cookie string   `json:"cookie"`
	Flows  []string `json:"flows"`
}

// description is what the role writes on a configured port (it requires one).
const description = "managed by rackwire"

// varsOf turns a change into the steps of its port. Every step runs whether or not the
// configuration uses it (no trunks clears the trunks, no rules deletes the rules), so a
// port holds exactly what the change names.
func (d *Driver) varsOf(c switchdriver.Change) (portVars, error) {
	v := portVars{Port: c.Port, Description: description, Trunked: []int{}}
	if err := switchdriver.CheckChange(c); err != nil {
		return v, err
	}
	cfg := c.Config
	if cfg.UntaggedVLAN != nil {
		id := int(*cfg.UntaggedVLAN)
		v.Untagged, v.Mode = &id, "access"
	}
	if cfg.VLANs != "" {
		set, err := vlan.Parse(string(cfg.VLANs))
		if err != nil {
			return v, fmt.Errorf("vlans: %w", err)
		}
		v.Trunked = slices.Collect(set.All())
		v.Mode = "trunk"
	}
	unsupported := func(what, action string) error {
		return fmt.Errorf("%w: %s cannot be applied on os %s (rackwire has no playbooks/providers/%s/%s.yaml)",
			ErrUnsupported, what, d.target.os, d.target.os, action)
	}
	switch {
	case d.supports(actionACL):
		rules, err := rulesOf(cfg.ACL)
		if err != nil {
			return v, err
		}
		flows, err := openflow.Flows(cookieOf(c.Port), c.Port, rules)
		if err != nil {
			return v, fmt.Errorf("acl: %w", err)
		}
		if flows == nil {
			flows = []string{} // an empty list, not null: the playbook deletes the port's rules
		}
		v.ACL = &aclVars{Cookie: fmt.Sprintf("%#x", cookieOf(c.Port)), Flows: flows}
	case len(cfg.ACL) > 0:
		return v, unsupported("access rules (acl)", actionACL)
	}
	switch {
	case d.supports(actionState):
		v.State, v.Disabled = true, cfg.Disabled
	case cfg.Disabled:
		return v, unsupported("disabling a port", actionState)
	}
	if d.supports(actionRecord) {
		b, err := json.Marshal(c.Config)
		if err != nil {
			return v, err
		}
		record := string(b)
		v.Record = &record
	}
	return v, nil
}

// cookieOf tags the OpenFlow rules of one port. Flows are always matched by cookie and
// port together, so two ports whose names hash alike still never touch each other's rules.
func cookieOf(port string) uint64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(port))
	return 0x7277<<48 | uint64(h.Sum32())
}

// rulesOf maps the API's ACL entries onto OpenFlow rules. A field that does not parse
// fails the port: left out, it would widen the rule to every address or port.
func rulesOf(acls []networkv1alpha1.ACL) ([]openflow.Rule, error) {
	out := make([]openflow.Rule, 0, len(acls))
	for i, a := range acls {
		r := openflow.Rule{IPv6: a.Type == "ipv6", Allow: a.Action == "allow"}
		if a.Protocol != "ALL" {
			r.Protocol = strings.ToLower(a.Protocol)
		}
		var err error
		for _, f := range []struct {
			name string
			in   string
			into *netip.Prefix
		}{{"src", string(a.Src), &r.Src}, {"des", string(a.Des), &r.Dst}} {
			if f.in == "" {
				continue
			}
			if *f.into, err = netip.ParsePrefix(f.in); err != nil {
				return nil, fmt.Errorf("acl[%d].%s: %w", i, f.name, err)
			}
		}
		if r.SrcPorts, err = openflow.ParsePortRange(string(a.SrcPortRange)); err != nil {
			return nil, fmt.Errorf("acl[%d].srcPortRange: %w", i, err)
		}
		if r.DstPorts, err = openflow.ParsePortRange(string(a.DesPortRange)); err != nil {
			return nil, fmt.Errorf("acl[%d].desPortRange: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

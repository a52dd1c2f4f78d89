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

package hostlink

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// IndexChassis keys Switches by their normalised chassisMAC, for LLDP discovery.
const IndexChassis = "rackwire.chassisMAC"

func chassisKeys(o client.Object) []string {
	sw := o.(*networkv1alpha1.Switch)
	if sw.Spec.ChassisMAC == "" {
		return nil
	}
	return []string{normalMAC(sw.Spec.ChassisMAC)}
}

// normalMAC is the lowercase colon form: LLDP, inspection and people write MACs differently.
func normalMAC(mac string) string {
	return strings.ToLower(strings.ReplaceAll(mac, "-", ":"))
}

// IndexEntryPort keys HostLinks by the SwitchPorts their entries name, "namespace/name":
// the infra team's word on a port beats any discovered wiring.
const IndexEntryPort = "rackwire.entryPort"

func entryPortKeys(o client.Object) []string {
	l := o.(*networkv1alpha1.HostLink)
	var out []string
	for _, p := range l.Spec.Ports {
		out = append(out, entryPort(l, p).String())
	}
	return out
}

func entryPort(l *networkv1alpha1.HostLink, p networkv1alpha1.HostPort) client.ObjectKey {
	ns := p.Port.Namespace
	if ns == "" {
		ns = l.Namespace
	}
	return client.ObjectKey{Namespace: ns, Name: p.Port.Name}
}

// wired is one NIC of the host and the SwitchPort it is cabled to.
type wired struct {
	nic, mac     string
	source       networkv1alpha1.WiringSource
	port         client.ObjectKey
	provisioning *networkv1alpha1.ObjectRef // the infra team's, in the port's namespace
	configured   *networkv1alpha1.ObjectRef // the infra team's tenant-less configuration
	attachment   *client.ObjectKey          // a HostNetworkAttachment of spec.networkInterfaces
}

// found is what wiring learned: the wires used, the wiring seen but not used, whether the
// HostLink's entries apply to this host, and problems as messages.
type found struct {
	wires    []wired
	unused   []networkv1alpha1.SeenWiring
	entries  bool
	problems []string
}

// hostMACs are the MACs the host has: its boot MAC and what inspection reported.
func hostMACs(host *metal3v1alpha1.BareMetalHost) map[string]bool {
	out := map[string]bool{}
	if host.Spec.BootMACAddress != "" {
		out[normalMAC(host.Spec.BootMACAddress)] = true
	}
	if hw := host.Status.HardwareDetails; hw != nil {
		for _, n := range hw.NIC {
			out[normalMAC(n.MAC)] = true
		}
	}
	return out
}

// wiring lists the host's cabled NICs: the HostLink's entries first (the infra team's word),
// then the host's spec.networkInterfaces (newer BMO), then NICs whose LLDP neighbour is a
// Switch with that chassis MAC and a port entry of that name. A NIC is wired once. An entry
// applies only to the host that has its MAC, or to the host the HostLink was first used for.
// Discovered wiring is used only where the Switch allows it for the host's namespace and no
// HostLink entry names the port; the rest is returned as unused.
func wiring(ctx context.Context, c client.Reader, host *metal3v1alpha1.BareMetalHost, link *networkv1alpha1.HostLink) (*found, error) {
	nics := map[string]string{} // mac -> name
	var seen []metal3v1alpha1.NIC
	if hw := host.Status.HardwareDetails; hw != nil {
		seen = hw.NIC
		for _, n := range seen {
			nics[normalMAC(n.MAC)] = n.Name
		}
	}
	f := &found{}
	taken := map[string]bool{}   // macs
	ports := map[string]string{} // port key -> mac
	add := func(w wired) {
		key := w.port.String()
		if other, ok := ports[key]; ok {
			f.problems = append(f.problems, fmt.Sprintf("NICs %s and %s both claim SwitchPort %s; only the first is used", other, w.mac, key))
			return
		}
		ports[key] = w.mac
		taken[w.mac] = true
		f.wires = append(f.wires, w)
	}
	if link != nil {
		macs := hostMACs(host)
		same := link.Status.HostUID != "" && link.Status.HostUID == host.UID
		for i, p := range link.Spec.Ports {
			mac := normalMAC(p.MAC)
			if !same && !macs[mac] {
				f.problems = append(f.problems, fmt.Sprintf("spec.ports[%d]: host %s (uid %s) has no NIC with MAC %s; the entry is not applied to it", i, host.Name, host.UID, mac))
				continue
			}
			f.entries = true
			add(wired{nic: nics[mac], mac: mac, source: networkv1alpha1.WiringSpec,
				port: entryPort(link, p), provisioning: p.ProvisioningConfiguration, configured: p.Configuration})
		}
	}
	// discovered checks a port found by discovery against the infra team's word.
	discovered := func(w wired, allowed []string) error {
		seenAs := networkv1alpha1.SeenWiring{NIC: w.nic, MAC: w.mac, Source: w.source,
			SwitchPort: networkv1alpha1.ObjectRef{Name: w.port.Name, Namespace: w.port.Namespace}}
		if !slices.Contains(allowed, host.Namespace) {
			seenAs.Reason = fmt.Sprintf("the Switch does not allow discovered wiring for hosts of namespace %s (spec.discoveryNamespaces)", host.Namespace)
			f.unused = append(f.unused, seenAs)
			return nil
		}
		links := &networkv1alpha1.HostLinkList{}
		if err := c.List(ctx, links, client.MatchingFields{IndexEntryPort: w.port.String()}); err != nil {
			return err
		}
		for _, l := range links.Items {
			if link == nil || l.UID != link.UID {
				seenAs.Reason = fmt.Sprintf("HostLink %s/%s names the port in its entries", l.Namespace, l.Name)
				f.unused = append(f.unused, seenAs)
				return nil
			}
		}
		add(w)
		return nil
	}
	ifaces, err := networkInterfaces(ctx, c, host)
	if err != nil {
		return nil, err
	}
	lldpOf := map[string]*metal3v1alpha1.LLDP{}
	for _, n := range seen {
		lldpOf[normalMAC(n.MAC)] = n.LLDP
	}
	for i, ni := range ifaces {
		mac := normalMAC(ni.MACAddress)
		if mac == "" {
			for m, name := range nics {
				if name == ni.Name {
					mac = m
				}
			}
		}
		if mac == "" {
			f.problems = append(f.problems, fmt.Sprintf("spec.networkInterfaces[%d]: no NIC the inspection reported has name %q", i, ni.Name))
			continue
		}
		if taken[mac] {
			continue
		}
		neighbour := lldpOf[mac]
		if ni.SwitchPort != nil {
			neighbour = &metal3v1alpha1.LLDP{SwitchID: ni.SwitchPort.SwitchID, PortID: ni.SwitchPort.PortID}
		}
		if neighbour == nil || neighbour.SwitchID == "" {
			f.problems = append(f.problems, fmt.Sprintf("spec.networkInterfaces[%d]: NIC %s has no switchPort and inspection saw no LLDP neighbour", i, mac))
			continue
		}
		port, allowed, problem, err := lldpPort(ctx, c, neighbour)
		switch {
		case err != nil:
			return nil, err
		case problem != "":
			f.problems = append(f.problems, fmt.Sprintf("spec.networkInterfaces[%d]: %s", i, problem))
		case port == nil:
			f.problems = append(f.problems, fmt.Sprintf("spec.networkInterfaces[%d]: no Switch has chassisMAC %s", i, neighbour.SwitchID))
		default:
			w := wired{nic: nics[mac], mac: mac, source: networkv1alpha1.WiringNetworkInterfaces, port: *port}
			if ref := ni.attachment(); ref != nil {
				ns := ref.Namespace
				if ns == "" {
					ns = host.Namespace
				}
				w.attachment = &client.ObjectKey{Namespace: ns, Name: ref.Name}
			}
			if err := discovered(w, allowed); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range seen {
		mac := normalMAC(n.MAC)
		if n.LLDP == nil || n.LLDP.SwitchID == "" || taken[mac] {
			continue
		}
		port, allowed, problem, err := lldpPort(ctx, c, n.LLDP)
		switch {
		case err != nil:
			return nil, err
		case problem != "":
			f.problems = append(f.problems, fmt.Sprintf("NIC %s: %s", n.Name, problem))
		case port != nil:
			if err := discovered(wired{nic: n.Name, mac: mac, source: networkv1alpha1.WiringLLDP, port: *port}, allowed); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// lldpPort is the SwitchPort of the Switch whose chassisMAC is the LLDP chassis ID and whose
// entry has the LLDP port ID as its name, with the host namespaces whose discovered wiring
// may use it; nil when no Switch claims the chassis, which is normal for switches rackwire
// does not manage.
func lldpPort(ctx context.Context, c client.Reader, lldp *metal3v1alpha1.LLDP) (*client.ObjectKey, []string, string, error) {
	switches := &networkv1alpha1.SwitchList{}
	if err := c.List(ctx, switches, client.MatchingFields{IndexChassis: normalMAC(lldp.SwitchID)}); err != nil {
		return nil, nil, "", err
	}
	switch len(switches.Items) {
	case 0:
		return nil, nil, "", nil
	case 1:
	default:
		return nil, nil, fmt.Sprintf("%d Switches claim chassis %s; the infra team must fix spec.chassisMAC", len(switches.Items), lldp.SwitchID), nil
	}
	sw := &switches.Items[0]
	for name, e := range sw.Spec.Ports {
		if e.Name != lldp.PortID {
			continue
		}
		ns := e.Namespace
		if ns == "" {
			ns = sw.Namespace
		}
		allowed := sw.Spec.DiscoveryNamespaces
		if e.DiscoveryNamespaces != nil {
			allowed = e.DiscoveryNamespaces
		}
		return &client.ObjectKey{Namespace: ns, Name: name}, allowed, "", nil
	}
	return nil, nil, fmt.Sprintf("Switch %s/%s (chassis %s) has no port entry named %q", sw.Namespace, sw.Name, lldp.SwitchID, lldp.PortID), nil
}

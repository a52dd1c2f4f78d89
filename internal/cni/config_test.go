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
	"encoding/binary"
	"math/big"
	"math/bits"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withRoots puts r in force for the test: the suite's TestMain allows its own directory only.
func withRoots(t *testing.T, r Roots) {
	old := AllowedRoots
	AllowedRoots = r
	t.Cleanup(func() { AllowedRoots = old })
}

func TestParseConfig(t *testing.T) {
	withRoots(t, DefaultRoots)
	wrap := func(ipam string) string {
		return `{"cniVersion":"1.0.0","name":"net","type":"macvlan","ipam":{"type":"rackwire","kubernetes":{"kubeconfig":"/etc/cni/net.d/k"}` + ipam + `}}`
	}
	for _, tc := range []struct {
		name, conf, err string
		check           func(*testing.T, *Config)
	}{
		{name: "whereabouts keys", conf: wrap(`,"range":"10.0.0.0/24","range_start":"10.0.0.10","range_end":"10.0.0.20","exclude":["10.0.0.12/31","10.0.0.15"],"gateway":"10.0.0.1","network_name":"n","leader_lease_duration":1500,"enable_overlapping_ranges":true,"log_level":"debug"`),
			check: func(t *testing.T, c *Config) {
				r := c.Ranges[0]
				if r.Subnet.String() != "10.0.0.0/24" || r.Start.String() != "10.0.0.10" || r.End.String() != "10.0.0.20" || len(r.Exclude) != 2 || r.Exclude[1].String() != "10.0.0.15/32" {
					t.Errorf("range %+v", r)
				}
				if c.NetworkName != "n" || c.Gateways[0].String() != "10.0.0.1" || c.Timeout != DefaultTimeout || c.StateDir != DefaultStateDir {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "start-end form", conf: wrap(`,"range":"10.0.0.5-10.0.0.9/24"`),
			check: func(t *testing.T, c *Config) {
				r := c.Ranges[0]
				if r.Subnet.String() != "10.0.0.0/24" || r.Start.String() != "10.0.0.5" || r.End.String() != "10.0.0.9" {
					t.Errorf("range %+v", r)
				}
			}},
		{name: "dual-stack, range first", conf: wrap(`,"range":"10.0.0.0/24","ipRanges":[{"range":"fd00::/64","exclude":["fd00::/120"]}]`),
			check: func(t *testing.T, c *Config) {
				if len(c.Ranges) != 2 || !c.Ranges[0].Subnet.Addr().Is4() || c.Ranges[1].Subnet.String() != "fd00::/64" {
					t.Errorf("ranges %+v", c.Ranges)
				}
			}},
		{name: "persistent IPs at the top", conf: `{"name":"n","allowPersistentIPs":true,"ipam":{"type":"rackwire","range":"10.0.0.0/24","kubernetes":{"kubeconfig":"/etc/cni/net.d/k"}}}`,
			check: func(t *testing.T, c *Config) {
				if !c.AllowPersistentIPs {
					t.Error("allowPersistentIPs not read")
				}
			}},
		{name: "persistent IPs in ipam", conf: wrap(`,"range":"10.0.0.0/24","allowPersistentIPs":true`),
			check: func(t *testing.T, c *Config) {
				if !c.AllowPersistentIPs {
					t.Error("allowPersistentIPs not read")
				}
			}},
		{name: "unknown key", conf: wrap(`,"range":"10.0.0.0/24","rnage_end":"10.0.0.9"`), err: "ipam.rnage_end: unknown key"},
		{name: "unknown key in ipRanges", conf: wrap(`,"ipRanges":[{"range":"10.0.0.0/24","gatway":"x"}]`), err: "ipam.ipRanges[0].gatway: unknown key"},
		{name: "bad range", conf: wrap(`,"range":"10.0.0.0/33"`), err: "ipam.range:"},
		{name: "start outside", conf: wrap(`,"range":"10.0.0.0/24","range_start":"10.0.1.1"`), err: "ipam.range_start: 10.0.1.1 is outside 10.0.0.0/24"},
		{name: "end below start", conf: wrap(`,"ipRanges":[{"range":"10.0.0.0/24","range_start":"10.0.0.9","range_end":"10.0.0.3"}]`), err: "ipam.ipRanges[0].range_end: 10.0.0.3 is below range_start"},
		{name: "bad exclude", conf: wrap(`,"range":"10.0.0.0/24","exclude":["nope"]`), err: "ipam.exclude[0]:"},
		{name: "exclude of the other family", conf: wrap(`,"range":"10.0.0.0/24","exclude":["fd00::/64"]`), err: "ipam.exclude[0]: fd00::/64 is not of the range's address family"},
		{name: "gateway outside", conf: wrap(`,"range":"10.0.0.0/24","gateway":"10.1.0.1"`), err: "ipam.gateway: 10.1.0.1 is in none of the ranges"},
		{name: "wrong type of value", conf: wrap(`,"range":["10.0.0.0/24"]`), err: "ipam.range: must be a string"},
		{name: "slice size", conf: wrap(`,"range":"10.0.0.0/24","node_slice_size":"/20"`), err: "ipam.node_slice_size:"},
		{name: "no range", conf: wrap(``), err: "ipam.range: missing"},
		{name: "no kubeconfig", conf: `{"name":"n","ipam":{"type":"rackwire","range":"10.0.0.0/24"}}`, err: "ipam.kubernetes.kubeconfig: missing"},
		{name: "timeout", conf: wrap(`,"range":"10.0.0.0/24","timeout":"soon"`), err: "ipam.timeout:"},
		{name: "etcd", conf: wrap(`,"range":"10.0.0.0/24","datastore":"etcd"`), err: "ipam.datastore:"},
		{name: "other type", conf: `{"name":"n","ipam":{"type":"whereabouts","range":"10.0.0.0/24","kubernetes":{"kubeconfig":"/etc/cni/net.d/k"}}}`, err: "ipam.type:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tc.conf), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestFlatFile(t *testing.T) {
	dir := t.TempDir()
	withRoots(t, Roots{State: []string{StateRoot}, Config: []string{"/from"}})
	flat := filepath.Join(dir, "whereabouts.conf")
	if err := os.WriteFile(flat, []byte(`{"kubernetes":{"kubeconfig":"/from/file"},"gateway":"10.0.0.254"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig([]byte(`{"name":"n","ipam":{"type":"rackwire","range":"10.0.0.0/24","gateway":"10.0.0.1"}}`), []string{filepath.Join(dir, "absent"), flat})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kubeconfig != "/from/file" || c.Gateways[0].String() != "10.0.0.1" || c.FlatFile != flat {
		t.Errorf("the file fills what the NAD lacks, the NAD wins: %+v", c)
	}
	if err := os.WriteFile(flat, []byte(`{"kubeconfig":"/etc/cni/net.d/k"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A key rackwire does not know is ignored and logged (whereabouts ignores them); one the
	// NAD has wrong still fails it.
	if err := os.WriteFile(flat, []byte(`{"kubernetes":{"kubeconfig":"/from/file"},"kubeconfig":"/etc/cni/net.d/k","enable_overlapping_ranges":false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]byte(`{"name":"n","ipam":{"type":"rackwire","range":"10.0.0.0/24"}}`), []string{flat})
	if err != nil || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `unknown key "kubeconfig" ignored`) {
		t.Errorf("unknown key of the flat file: %v %+v", err, c)
	}
	if err == nil && !c.OverlappingRanges {
		t.Errorf("enable_overlapping_ranges taken from the flat file; whereabouts reads it from the NAD only")
	}
	if _, err := parseConfig([]byte(`{"name":"n","ipam":{"type":"rackwire","range":"10.0.0.0/24","bogus":1}}`), []string{flat}); err == nil || !strings.Contains(err.Error(), "ipam.bogus: unknown key") {
		t.Errorf("unknown key of the NAD: %v", err)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{PoolName("", "", netip.MustParsePrefix("10.0.0.0/24")), "10.0.0.0-24"},
		{PoolName("net", "", netip.MustParsePrefix("10.0.0.0/24")), "net-10.0.0.0-24"},
		{PoolName("net", "node1", netip.MustParsePrefix("fd00::/80")), "net-node1-fd00---80"},
		{PoolName("", "node1", netip.MustParsePrefix("10.0.0.64/26")), "node1-10.0.0.64-26"},
		{ReservationName("", netip.MustParseAddr("10.0.0.5")), "10.0.0.5"},
		{ReservationName("net", netip.MustParseAddr("fd00::")), "net-fd00--0"},
		{ReservationName("", netip.MustParseAddr("fd00::5")), "fd00--5"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestOffsets(t *testing.T) {
	for _, tc := range []struct{ pool, addr, key string }{
		{"10.0.0.0/24", "10.0.0.0", "0"},
		{"10.0.0.64/26", "10.0.0.65", "1"},
		{"fd00::/32", "fd00:0:0:1::", "18446744073709551616"},
		// From 2^63: the negative int64 of the same bits, which whereabouts reads as the offset.
		{"fd00::/64", "fd00::ffff:ffff:ffff:ffff", "-1"},
		{"fd00::/32", "fd00::ffff:ffff:ffff:ffff", "-1"},
		{"fd00::/64", "fd00::8000:0:0:0", "-9223372036854775808"},
		{"fd00::/64", "fd00::7fff:ffff:ffff:ffff", "9223372036854775807"},
		{"fd00::/32", "fd00:0:0:1::1", "18446744073709551617"},
		{"fd00::ff00/120", "fd00::ffff", "255"},
		{"255.255.255.0/24", "255.255.255.255", "255"},
	} {
		p, a := netip.MustParsePrefix(tc.pool), netip.MustParseAddr(tc.addr)
		if got := Offset(p, a); got != tc.key {
			t.Errorf("Offset(%s, %s) = %s, want %s", p, a, got, tc.key)
		}
		if got, err := AtOffset(p, tc.key); err != nil || got != a {
			t.Errorf("AtOffset(%s, %s) = %v %v, want %s", p, tc.key, got, err, a)
		}
		// whereabouts v0.9.4 (toIPReservationList): ParseInt(key, 10, 64), then the network
		// address plus uint64 of it; keys it cannot parse it skips, and only those past 64 bits
		// may be such.
		if n, err := strconv.ParseInt(tc.key, 10, 64); err == nil {
			b16 := p.Masked().Addr().As16()
			hi, lo := binary.BigEndian.Uint64(b16[:8]), binary.BigEndian.Uint64(b16[8:])
			lo, carry := bits.Add64(lo, uint64(n), 0)
			hi += carry
			var b [16]byte
			binary.BigEndian.PutUint64(b[:8], hi)
			binary.BigEndian.PutUint64(b[8:], lo)
			if got := netip.AddrFrom16(b); a.Is6() && got != a {
				t.Errorf("whereabouts reads %s in %s as %s, not %s", tc.key, p, got, a)
			}
		} else if n, ok := new(big.Int).SetString(tc.key, 10); !ok || n.BitLen() <= 64 {
			t.Errorf("whereabouts cannot read key %s of %s", tc.key, a)
		}
	}
	for _, bad := range []string{"-1", "x", "256", "1e3", "", "18446744073709551616"} {
		if _, err := AtOffset(netip.MustParsePrefix("10.0.0.0/24"), bad); err == nil {
			t.Errorf("AtOffset accepted %q", bad)
		}
	}
}

func FuzzOffset(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0}, uint8(24), []byte{10, 0, 0, 77})
	f.Add(make([]byte, 16), uint8(32), append(make([]byte, 15), 9))
	f.Fuzz(func(t *testing.T, base []byte, bits uint8, addr []byte) {
		b, ok1 := netip.AddrFromSlice(base)
		a, ok2 := netip.AddrFromSlice(addr)
		if !ok1 || !ok2 || b.BitLen() != a.BitLen() || int(bits) > b.BitLen() {
			return
		}
		p := netip.PrefixFrom(b, int(bits)).Masked()
		if !p.Contains(a) {
			return
		}
		got, err := AtOffset(p, Offset(p, a))
		if err != nil || got != a {
			t.Fatalf("round trip of %s in %s: %v %v", a, p, got, err)
		}
	})
}

// TestPathsConfined: every path a configuration names lies under the DaemonSet's
// directories, or the configuration fails naming the key.
func TestPathsConfined(t *testing.T) {
	withRoots(t, DefaultRoots)
	conf := func(ipam string) []byte {
		return []byte(`{"name":"n","ipam":{"type":"rackwire","range":"10.0.0.0/24","kubernetes":{"kubeconfig":"/etc/cni/net.d/rackwire.d/rackwire.kubeconfig"}` + ipam + `}}`)
	}
	for _, tc := range []struct{ ipam, err string }{
		{`,"state_dir":"/var/lib/cni/rackwire"`, ""},
		{`,"state_dir":"/var/lib/cni/rackwire/other"`, "ipam.state_dir: \"/var/lib/cni/rackwire/other\" is below the plugin's state directory"},
		{`,"log_file":"/var/log/rackwire/net.log"`, ""},
		{`,"kubernetes":{"kubeconfig":"/etc/kubernetes/cni/net.d/whereabouts.d/whereabouts.kubeconfig"}`, ""},
		{`,"state_dir":"/etc/foo"`, "ipam.state_dir: \"/etc/foo\" is outside"},
		{`,"state_dir":"/var/lib/cni/rackwire/../../../../etc"`, "ipam.state_dir:"},
		{`,"state_dir":"/var/lib/cni/rackwire-other"`, "ipam.state_dir:"},
		{`,"state_dir":"relative"`, "ipam.state_dir: \"relative\" is not an absolute path"},
		{`,"log_file":"/root/x"`, "ipam.log_file: \"/root/x\" is outside"},
		{`,"log_file":"/var/log/rackwire"`, "ipam.log_file:"},
		{`,"kubernetes":{"kubeconfig":"/etc/shadow"}`, "ipam.kubernetes.kubeconfig: \"/etc/shadow\" is outside"},
		{`,"configuration_path":"/root/flat.conf"`, "ipam.configuration_path: \"/root/flat.conf\" is outside"},
	} {
		_, err := parseConfig(conf(tc.ipam), nil)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.ipam, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.ipam, err, tc.err)
		}
	}
}

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

package switchport_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/scheme"
)

const (
	tenantUser  = "tenant"
	tenantGroup = "team-a"
)

// tenantRole creates the tenant ClusterRole of config/rbac once.
func tenantRole() {
	role := &rbacv1.ClusterRole{}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "tenant_role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(data, role)).To(Succeed())
	if err := k8s.Create(ctx, role); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

var _ = Describe("a tenant", Ordered, func() {
	var (
		ns     string
		tenant client.Client
	)
	BeforeAll(func() {
		tenantRole()
		ns = newNamespace()
		newLimit(ns, "2, 6-10")
		newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{
			"trunk":  {Name: "port0", VLANRange: "2, 6-10"},
			"access": {Name: "port1", VLANRange: "6-10", TrunkDisable: true},
		})
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rackwire-tenant"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tenant"},
			Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: tenantGroup}},
		})).To(Succeed())
		tc := rest.CopyConfig(cfg)
		tc.Impersonate = rest.ImpersonationConfig{UserName: tenantUser, Groups: []string{tenantGroup}}
		var err error
		tenant, err = client.New(tc, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		Eventually(stateOf(ns, "trunk")).Should(Equal(idle))
		Eventually(stateOf(ns, "access")).Should(Equal(idle))
	})

	It("links a configuration inside its limit and the port becomes Active", func() {
		Expect(tenant.Create(ctx, configuration(ns, "web", 6, "7-10"))).To(Succeed())
		Expect(link(tenant, ns, "trunk", "web")).To(Succeed())
		Eventually(stateOf(ns, "trunk")).Should(Equal(active))
		Expect(link(tenant, ns, "trunk", "")).To(Succeed())
		Eventually(stateOf(ns, "trunk")).Should(Equal(idle))
	})

	It("is refused, with a readable kubectl message, outside its limit, the port's vlanRange or trunkDisable", func() {
		Expect(tenant.Create(ctx, configuration(ns, "native2", 2, ""))).To(Succeed())
		Expect(tenant.Create(ctx, configuration(ns, "tagged", 6, "7-8"))).To(Succeed())

		user, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600)).To(Succeed())
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		if _, err := os.Stat(kubectl); err != nil {
			kubectl = "kubectl"
		}
		asTenant := func(stdin string, args ...string) string {
			args = append([]string{"--kubeconfig", filepath.Join(dir, "kubeconfig"), "--as", tenantUser, "--as-group", tenantGroup, "-n", ns}, args...)
			cmd := exec.Command(kubectl, args...)
			cmd.Stdin = bytes.NewBufferString(stdin)
			out, err := cmd.CombinedOutput()
			Expect(err).To(HaveOccurred(), "kubectl should fail, said %s", out)
			GinkgoWriter.Println("kubectl said:", string(out))
			return string(out)
		}

		By("a VLAN outside user-limit")
		Expect(asTenant(`apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata:
  name: wide
spec:
  untaggedVLAN: 6
  vlans: "7-12"
`, "apply", "-f", "-")).To(ContainSubstring(`spec.vlans: Invalid value: "7-12": VLANs 11-12 are outside the namespace's SwitchResourceLimit user-limit (2, 6-10)`))

		By("a VLAN outside the port's vlanRange")
		Expect(asTenant("", "patch", "switchport", "access", "--type=merge", "-p", `{"spec":{"configuration":{"name":"native2"}}}`)).To(
			ContainSubstring(`spec.configuration.untaggedVLAN: Invalid value: 2: VLAN is outside the vlanRange "6-10" of port port1`))

		By("a trunk on a trunkDisable port")
		Expect(asTenant("", "patch", "switchport", "access", "--type=merge", "-p", `{"spec":{"configuration":{"name":"tagged"}}}`)).To(
			ContainSubstring("spec.configuration.vlans: Forbidden: port port1 may not be a trunk (trunkDisable)"))

		By("a configuration of another namespace")
		Expect(asTenant("", "patch", "switchport", "trunk", "--type=merge", "-p", `{"spec":{"configuration":{"name":"tagged","namespace":"default"}}}`)).To(
			ContainSubstring("spec.configuration.namespace: Invalid value: \"default\": a SwitchPort may only link a SwitchPortConfiguration of its own namespace"))
		Expect(stateOf(ns, "access")()).To(Equal(idle))
	})

	It("cannot create or delete SwitchPorts, change anything but spec.configuration, or touch Switches", func() {
		p := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}
		Expect(tenant.Create(ctx, p)).To(Satisfy(apierrors.IsForbidden))
		Expect(tenant.Delete(ctx, port(ns, "trunk"))).To(Satisfy(apierrors.IsForbidden))

		mine := port(ns, "trunk")
		base := mine.DeepCopy()
		mine.Labels["metal3.io/switch-name"] = "elsewhere"
		err := tenant.Patch(ctx, mine, client.MergeFrom(base))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("may only change spec.configuration"))

		mine = port(ns, "trunk")
		base = mine.DeepCopy()
		mine.Finalizers = nil
		Expect(tenant.Patch(ctx, mine, client.MergeFrom(base))).To(Satisfy(apierrors.IsForbidden))

		sw := &networkv1alpha1.Switch{}
		Expect(tenant.Get(ctx, key(ns, "leaf"), sw)).To(Succeed(), "a tenant reads the ports' vlanRange and trunkDisable")
		base2 := sw.DeepCopy()
		sw.Spec.Ports["access"] = networkv1alpha1.PortInfo{Name: "port1"}
		Expect(tenant.Patch(ctx, sw, client.MergeFrom(base2))).To(Satisfy(apierrors.IsForbidden))
		Expect(tenant.Get(ctx, key(ns, "leaf"), &networkv1alpha1.AnsibleSwitch{})).To(Satisfy(apierrors.IsForbidden))
		Expect(tenant.Delete(ctx, &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf"}})).To(Satisfy(apierrors.IsForbidden))
		Expect(tenant.Create(ctx, switchObj(ns, "rogue", nil))).To(Satisfy(apierrors.IsForbidden))
		Expect(tenant.Delete(ctx, &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName}})).To(Satisfy(apierrors.IsForbidden))
	})
})

var _ = Describe("the switch webhooks", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("refuse bad VLANs, ACLs, limits, ports and providers with the field path", func() {
		newLimit(ns, "2, 6-10")
		c := configuration(ns, "bad", 6, "")
		c.Spec.ACL = []networkv1alpha1.ACL{
			{Type: "ipv4", Action: "allow", Protocol: "TCP", Src: "fd00::/64"},
			{Type: "ipv4", Action: "allow", Protocol: "ICMP", DesPortRange: "22"},
			{Type: "ipv4", Action: "allow", Protocol: "TCP", DesPortRange: "30-22"},
		}
		err := k8s.Create(ctx, c)
		Expect(err).To(MatchError(And(
			ContainSubstring("spec.acl[0].src"), ContainSubstring("spec.acl[1].desPortRange: Forbidden"),
			ContainSubstring("spec.acl[2].desPortRange: Invalid value: \"30-22\": range runs backwards"))))

		l := &networkv1alpha1.SwitchResourceLimit{}
		Expect(k8s.Get(ctx, key(ns, networkv1alpha1.SwitchResourceLimitName), l)).To(Succeed())
		newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		Eventually(func() string {
			Expect(k8s.Get(ctx, key(ns, networkv1alpha1.SwitchResourceLimitName), l)).To(Succeed())
			return l.Status.UsedVLANs
		}).Should(Equal("6-10"))
		l.Spec.VLANRange = "2, 6-8"
		Expect(k8s.Update(ctx, l)).To(MatchError(ContainSubstring("spec.vlanRange: Forbidden: VLANs 9-10 are in use")))

		sw := switchObj(ns, "dup", map[string]networkv1alpha1.PortInfo{"a": {Name: "e1"}, "b": {Name: "e1"}})
		Expect(k8s.Create(ctx, sw)).To(MatchError(ContainSubstring("spec.ports[b].name: Duplicate value")))
		a := ansibleSwitch(ns, "bad")
		a.Spec.Bridge = ""
		Expect(k8s.Create(ctx, a)).To(MatchError(ContainSubstring("bridge")))
	})

	It("refuse an OS without playbooks, and access rules on a port whose OS cannot apply them, with the field path", func() {
		fos := ansibleSwitch(ns, "fortigate")
		fos.Spec.OS, fos.Spec.Bridge = "fos", ""
		Expect(k8s.Create(ctx, fos)).To(MatchError(And(ContainSubstring("spec.os"),
			ContainSubstring("os fos is not supported"), ContainSubstring("network-runner"), ContainSubstring("junos"))))

		newLimit(ns, "2-100")
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "arista-creds"},
			StringData: map[string]string{"username": "u", "password": "p", "enableSecret": "e"}}
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		eos := ansibleSwitch(ns, "arista")
		eos.Spec.OS, eos.Spec.Bridge = "eos", ""
		Expect(k8s.Create(ctx, eos)).To(Succeed())
		Expect(k8s.Create(ctx, switchObj(ns, "arista", map[string]networkv1alpha1.PortInfo{"e1": {Name: "Ethernet1"}}))).To(Succeed())
		Eventually(stateOf(ns, "e1")).Should(Equal(idle))

		guarded := configuration(ns, "guarded", 6, "")
		guarded.Spec.ACL = []networkv1alpha1.ACL{{Type: "ipv4", Action: "allow", Protocol: "TCP", DesPortRange: "22"}}
		Expect(k8s.Create(ctx, guarded)).To(Succeed())
		Expect(link(k8s, ns, "e1", "guarded")).To(MatchError(And(
			ContainSubstring("spec.configuration.name: Forbidden"), ContainSubstring("os eos"), ContainSubstring("openvswitch only"))))

		down := configuration(ns, "down", 6, "7-9")
		down.Spec.Disabled = true
		Expect(k8s.Create(ctx, down)).To(Succeed())
		Expect(link(k8s, ns, "e1", "down")).To(Succeed())
		Eventually(stateOf(ns, "e1")).Should(Equal(active))
	})
})

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

package ipam_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// guideBlocks returns the sh blocks of the migration guide.
func guideBlocks() []string {
	b, err := os.ReadFile(filepath.Join(root, "docs", "migrating-from-ip-address-manager.md"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

var _ = Describe("the migration guide", func() {
	It("lists adopted addresses by the pool label and reserves an excluded address as its going-back section says", func() {
		ns := newNamespace()
		pool := newPool(ns, "guide", rangeOf("192.168.0.10", "192.168.0.30", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.ExcludedAddresses = []ipamv1alpha1.IPRangeStr{"192.168.0.20"}
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		claim := newClaim(ns, "machine-0", "guide")
		claim.Finalizers = []string{ipam.ClaimFinalizer}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		up := externalAddress(ns, "guide-192-168-0-10", "guide", "192.168.0.10")
		up.Spec.Claim = corev1.ObjectReference{Name: "machine-0", Namespace: ns}
		up.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: "machine-0", UID: claim.UID}}
		Expect(k8s.Create(ctx, up)).To(Succeed())
		Expect(boundAddress(ns, "machine-0").Name).To(Equal(up.Name))

		user, err := testEnv.AddUser(envtest.User{Name: "guide", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600)).To(Succeed())
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		run := func(script string) string {
			script = strings.NewReplacer("<namespace>", ns, "<pool>", "guide", "<namePrefix>", "guide").Replace(script)
			cmd := exec.Command("bash", "-euc", script)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			ExpectWithOffset(1, err).NotTo(HaveOccurred(), "%s\n%s", script, out)
			return string(out)
		}

		listing, reserve := guideListing(), ""
		for _, b := range guideBlocks() {
			if strings.Contains(b, "kind: IPAddress") {
				reserve = b
			}
		}
		Expect(listing).NotTo(BeEmpty(), "the guide lists addresses by label")
		Expect(reserve).NotTo(BeEmpty(), "the guide reserves excluded addresses")

		By("listing the adopted address by the label the guide gives")
		Eventually(func() string { return run(listing + " -n " + ns) }).Should(ContainSubstring(up.Name))

		By("reserving the excluded address with the guide's manifest")
		run(reserve)
		Eventually(func() string { return run(listing + " -n " + ns) }).Should(ContainSubstring("guide-reserved-192-168-0-20"))
		got := &ipamv1alpha1.IPAddress{}
		Expect(k8s.Get(ctx, key(ns, "guide-reserved-192-168-0-20"), got)).To(Succeed())
		Expect(got.Spec.Claim.Name).To(BeEmpty())
		Expect(string(got.Spec.Address)).To(Equal("192.168.0.20"))
	})
})

// guideListing returns the guide's command that lists a pool's addresses by its label.
func guideListing() string {
	for _, b := range guideBlocks() {
		for _, line := range strings.Split(b, "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "kubectl get ") && strings.Contains(line, "-l "+ipam.PoolLabel+"=") {
				return strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
			}
		}
	}
	return ""
}

var _ = Describe("the migration guide's label listing", func() {
	// Cluster API IPAddresses come from the same pools and carry the same label; the
	// listing that the guide gives to check a takeover and to read an IndexesOmitted pool
	// must show them too.
	It("lists the Cluster API IPAddresses of the pool as well", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, newPool(ns, "both", rangeOf("192.168.0.10", "192.168.0.30", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "machine-1", "both"))).To(Succeed())
		ip := boundCAPIAddress(ns, "machine-1")
		Expect(ip.Labels).To(HaveKeyWithValue(ipam.PoolLabel, "both"))

		user, err := testEnv.AddUser(envtest.User{Name: "guide-listing", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600)).To(Succeed())
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		listing := guideListing()
		Expect(listing).NotTo(BeEmpty(), "the guide lists addresses by label")
		script := strings.NewReplacer("<pool>", "both").Replace(listing) + " -n " + ns
		cmd := exec.Command("bash", "-euc", script)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s\n%s", script, out)
		Expect(string(out)).To(ContainSubstring(ip.Name), "%s lists no Cluster API IPAddress", script)
	})
})

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

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
	"github.com/rackwire/rackwire/internal/scheme"
)

// recordedPIDs reads the process record devenv keeps in its directory.
func recordedPIDs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "processes"))
	if os.IsNotExist(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pid, err := strconv.Atoi(strings.Fields(line)[0])
		Expect(err).NotTo(HaveOccurred())
		pids = append(pids, pid)
	}
	return pids
}

// running is true for a live, non-zombie process.
func running(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0] != "Z"
}

func clientFor(kubeconfig string) client.Client {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("make dev", Ordered, func() {
	var (
		ctx   = context.Background()
		dir   string
		first *devenv.Env
	)

	// Every spec reads the environment this starts, so that each runs alone under a focus.
	BeforeAll(func() {
		dir = GinkgoT().TempDir()
		var err error
		first, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: dir, Manager: manager, Samples: true, Log: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
	})
	// The crash spec takes first's processes over and stops them; otherwise they stop here.
	AfterAll(func() {
		if first != nil {
			Expect(first.Stop()).To(Succeed())
		}
	})

	It("brings up the control plane, a ready manager and the samples", func() {
		admin := clientFor(first.Kubeconfig)
		pool := &ipamv1alpha1.IPPool{}
		Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "pool-1"}, pool)).To(Succeed())
		Expect(pool.Spec.NamePrefix).To(Equal("provisioning"))
		Expect(recordedPIDs(dir)).To(HaveLen(4), "etcd, kube-apiserver, kube-controller-manager and the manager")

		// The sample VM's claim, allocated by the manager under its own ClusterRole: the
		// first free address of each range of the sample NAD (gateway and exclusions skipped).
		Eventually(func(g Gomega) []string {
			claim := &ipamclaimsv1alpha1.IPAMClaim{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "vm-blue.blue"}, claim)).To(Succeed())
			return claim.Status.IPs
		}, time.Minute).Should(Equal([]string{"192.168.10.4/24", "fd10::100/64"}))
	})

	It("serves the manager's webhooks on loopback with a certificate the apiserver trusts", func() {
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(first.WebhookCA)).To(BeTrue())
		conn, err := tls.Dial("tcp", first.WebhookAddr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Close()).To(Succeed())
	})

	It("serves metrics for pools, claims, node slices, persistent IPs and host links", func() {
		checkMetrics(ctx, first)
	})

	It("runs the manager under its generated ClusterRole, not as an admin", func() {
		mgr := clientFor(filepath.Join(dir, "manager.kubeconfig"))
		// It reads pods (the IP reconciler) but nothing of what runs them.
		err := mgr.List(ctx, &corev1.ConfigMapList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing ConfigMaps as the manager: %v", err)
		err = mgr.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "any"}})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "deleting a pod as the manager: %v", err)

		event := &corev1.Event{}
		event.GenerateName, event.Namespace = "devenv-", "default"
		event.InvolvedObject = corev1.ObjectReference{Kind: "IPPool", Namespace: "default", Name: "pool-1"}
		event.Reason, event.Message = "Check", "the manager may record events"
		Expect(mgr.Create(ctx, event)).To(Succeed())
	})

	It("comes up again over the leftovers of a run that crashed, and stops the manager with SIGTERM", func() {
		leftovers := recordedPIDs(dir)
		// Starting over without stopping the first run is what a crash leaves behind: its
		// processes, its process record and its state directory.
		second, err := devenv.Start(ctx, devenv.Options{Root: root, Dir: dir, Manager: manager, Samples: true, Log: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		first = nil
		for _, pid := range leftovers {
			Expect(running(pid)).To(BeFalse(), "pid %d of the crashed run", pid)
		}

		current := recordedPIDs(dir)
		Expect(current).To(HaveLen(4), "etcd, kube-apiserver, kube-controller-manager, the manager")
		Expect(clientFor(second.Kubeconfig).Get(ctx, client.ObjectKey{Namespace: "default", Name: "pool-1"}, &ipamv1alpha1.IPPool{})).To(Succeed())

		Expect(second.Stop()).To(Succeed())
		for _, pid := range current {
			Expect(running(pid)).To(BeFalse(), "pid %d after Stop", pid)
		}
		Expect(recordedPIDs(dir)).To(BeEmpty())

		// Stop succeeded only if the manager exited on its own after SIGTERM; its log says
		// so rather than being cut off.
		log, err := os.ReadFile(filepath.Join(dir, "manager.log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("Stopping and waiting for"))
	})
})

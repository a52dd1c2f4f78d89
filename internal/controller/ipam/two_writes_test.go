package ipam_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/scheme"
)

// firstChange watches obj from the resourceVersion its create returned and returns the
// object of the first change the apiserver stored after the create.
func firstChange(obj client.Object, list client.ObjectList) client.Object {
	w, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	watcher, err := w.Watch(ctx, list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{"metadata.name": obj.GetName()},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: obj.GetResourceVersion()}})
	Expect(err).NotTo(HaveOccurred())
	defer watcher.Stop()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-watcher.ResultChan():
			o, ok := ev.Object.(client.Object)
			if !ok || ev.Type == watch.Bookmark || o.GetResourceVersion() == obj.GetResourceVersion() {
				continue
			}
			return o
		case <-deadline:
			Fail("no change of " + obj.GetName() + " after its create")
			return nil
		}
	}
}

var _ = Describe("the writes a claim costs", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("are two of the controller for either kind: the claim's create carries the finalizer, its first change is its bound status", func() {
		Expect(k8s.Create(ctx, newPool(ns, "two", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())

		m := newClaim(ns, "m", "two")
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(m.Finalizers).To(ConsistOf(ipam.ClaimFinalizer), "the create's answer carries the finalizer")
		got := firstChange(m, &ipamv1alpha1.IPClaimList{}).(*ipamv1alpha1.IPClaim)
		Expect(got.Status.Address).NotTo(BeNil(), "the claim's first change after its create is its bound status, not a finalizer of its own")
		Expect(got.Finalizers).To(ConsistOf(ipam.ClaimFinalizer))

		c := newCAPIClaim(ns, "c", "two")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Expect(c.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer), "the create's answer carries the finalizer")
		gotc := firstChange(c, &capiipamv1beta2.IPAddressClaimList{}).(*capiipamv1beta2.IPAddressClaim)
		Expect(gotc.Status.AddressRef.Name).NotTo(BeEmpty(), "the claim's first change after its create is its bound status, not a finalizer of its own")
		Expect(gotc.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer))
	})

	It("give the address of a claim deleted between its IPAddress's create and its status write back (both kinds)", func() {
		Expect(k8s.Create(ctx, newPool(ns, "one", rangeOf("192.168.0.10", "192.168.0.10", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		// Each IPAddress create lands, then its claim is deleted before the controller's
		// second write.
		faults.onCreate(ns, func(_ context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			var claim client.Object
			switch ip := obj.(type) {
			case *ipamv1alpha1.IPAddress:
				claim = newClaim(ns, ip.Spec.Claim.Name, "one")
			case *capiipamv1beta2.IPAddress:
				claim = newCAPIClaim(ns, ip.Spec.ClaimRef.Name, "one")
			}
			if claim != nil && strings.HasPrefix(claim.GetName(), "doomed") {
				return client.IgnoreNotFound(k8s.Delete(ctx, claim))
			}
			return nil
		})
		DeferCleanup(func() { faults.onCreate(ns, nil) })

		Expect(k8s.Create(ctx, newClaim(ns, "doomed-m", "one"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, key(ns, "doomed-m"), &ipamv1alpha1.IPClaim{}))).To(BeTrue())
		}).Should(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "next-c", "one"))).To(Succeed())
		Expect(boundCAPIAddress(ns, "next-c").Spec.Address).To(Equal("192.168.0.10"))
		m3, _ := claimAddresses(ns, "doomed-m")
		Expect(m3).To(BeEmpty())

		Expect(k8s.Delete(ctx, newCAPIClaim(ns, "next-c", "one"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "doomed-c", "one"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, key(ns, "doomed-c"), &capiipamv1beta2.IPAddressClaim{}))).To(BeTrue())
		}).Should(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "next-m", "one"))).To(Succeed())
		Expect(boundAddress(ns, "next-m").Spec.Address).To(BeEquivalentTo("192.168.0.10"))
		_, capi := claimAddresses(ns, "doomed-c")
		Expect(capi).To(BeEmpty())
	})
})

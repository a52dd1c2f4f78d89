package ipam_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
})

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

package v1alpha1

import (
	"context"
	"fmt"
	"net/netip"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// +kubebuilder:webhook:path=/mutate-ipam-metal3-io-v1alpha1-ippool,mutating=true,failurePolicy=fail,sideEffects=None,groups=ipam.metal3.io,resources=ippools,verbs=create;update,versions=v1alpha1,name=mippool-v1alpha1.ipam.metal3.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ipam-metal3-io-v1alpha1-ippool,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.metal3.io,resources=ippools,verbs=create;update,versions=v1alpha1,name=vippool-v1alpha1.ipam.metal3.io,admissionReviewVersions=v1

// IPPoolWebhook validates and defaults IPPools.
type IPPoolWebhook struct {
	// Cache finds the addresses of a pool through the pool index of the manager's cache.
	Cache client.Reader
	// CAPI: the Cluster API IPAM API is installed, so its IPAddresses count too.
	CAPI bool
}

var (
	_ admission.Validator[*ipamv1alpha1.IPPool] = &IPPoolWebhook{}
	_ admission.Defaulter[*ipamv1alpha1.IPPool] = &IPPoolWebhook{}
)

func setupIPPool(mgr ctrl.Manager, capi bool) error {
	w := &IPPoolWebhook{Cache: mgr.GetCache(), CAPI: capi}
	return ctrl.NewWebhookManagedBy(mgr, &ipamv1alpha1.IPPool{}).WithValidator(w).WithDefaulter(w).Complete()
}

// Default labels a pool of a cluster for clusterctl move, which selects what it moves by
// that label, and spells out the default strategy on a new pool. Only on create: a pool
// stored without a strategy keeps behaving as it did (sequential), and an update that does
// not touch the field must not change how the pool allocates.
func (w *IPPoolWebhook) Default(ctx context.Context, pool *ipamv1alpha1.IPPool) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation == admissionv1.Create && pool.Spec.AllocationStrategy == "" {
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
	}
	if pool.Spec.ClusterName != nil && *pool.Spec.ClusterName != "" {
		if pool.Labels == nil {
			pool.Labels = map[string]string{}
		}
		pool.Labels[ipam.ClusterNameLabel] = *pool.Spec.ClusterName
	}
	return nil
}

// ValidateCreate checks a new object.
func (w *IPPoolWebhook) ValidateCreate(_ context.Context, pool *ipamv1alpha1.IPPool) (admission.Warnings, error) {
	_, errs := validatePoolSpec(pool)
	errs = append(errs, ipam.PoolRules(&pool.Spec)...)
	return nil, invalid(kindIPPool, pool.Name, errs)
}

// ValidateUpdate checks a change of the spec. An update that leaves the spec alone (labels,
// annotations, finalizers) is never refused, whatever the stored spec is: refusing it
// would block clusterctl move and every controller that labels the pool.
func (w *IPPoolWebhook) ValidateUpdate(ctx context.Context, old, pool *ipamv1alpha1.IPPool) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, pool.Spec) {
		return nil, nil
	}
	alloc, errs := validatePoolSpec(pool)
	errs = append(errs, ipam.PoolRules(&pool.Spec)...)
	if pool.Spec.NamePrefix != old.Spec.NamePrefix {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "namePrefix"),
			"is immutable: the names of the pool's IPAddresses derive from it"))
	}
	if alloc != nil {
		// A pre-allocated address may lie outside the ranges (inside an entry's subnet), and
		// is the pool's as long as the pre-allocation stays.
		pre, _ := ipam.PreAllocations(&pool.Spec, alloc)
		kept := map[netip.Addr]bool{}
		for _, a := range pre {
			kept[a] = true
		}
		contains := func(a netip.Addr) bool { return alloc.Contains(a) || kept[a] }
		dropped, err := w.dropped(ctx, pool, contains)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, dropped...)
	}
	return nil, invalid(kindIPPool, pool.Name, errs)
}

// ValidateDelete allows every deletion: the reconcilers hold back, with finalizers, what must not go yet.
func (w *IPPoolWebhook) ValidateDelete(context.Context, *ipamv1alpha1.IPPool) (admission.Warnings, error) {
	return nil, nil
}

func validatePoolSpec(pool *ipamv1alpha1.IPPool) (*ipalloc.Pool, field.ErrorList) {
	alloc, errs := ipam.BuildPool(&pool.Spec)
	_, perrs := ipam.PreAllocations(&pool.Spec, alloc)
	return alloc, append(errs, perrs...)
}

// dropped lists the allocated addresses the new spec would no longer hand out. The
// addresses come from the cache's pool index: one pool's addresses, not a namespace.
func (w *IPPoolWebhook) dropped(ctx context.Context, pool *ipamv1alpha1.IPPool, contains func(netip.Addr) bool) (field.ErrorList, error) {
	var errs field.ErrorList
	check := func(kind, name, addr string) {
		a, err := netip.ParseAddr(addr)
		if err == nil && !contains(a.Unmap()) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "pools"),
				fmt.Sprintf("address %s is allocated (%s %s) and would no longer be in the pool", addr, kind, name)))
		}
	}
	var m3 ipamv1alpha1.IPAddressList
	if err := w.Cache.List(ctx, &m3, client.InNamespace(pool.Namespace), client.MatchingFields{ipam.IndexPool: pool.Name}); err != nil {
		return nil, err
	}
	for _, ip := range m3.Items {
		check("IPAddress", ip.Name, string(ip.Spec.Address))
	}
	if !w.CAPI {
		return errs, nil
	}
	var capi capiipamv1beta2.IPAddressList
	if err := w.Cache.List(ctx, &capi, client.InNamespace(pool.Namespace), client.MatchingFields{ipam.IndexPool: pool.Name}); err != nil {
		return nil, err
	}
	for _, ip := range capi.Items {
		check("ipam.cluster.x-k8s.io IPAddress", ip.Name, ip.Spec.Address)
	}
	return errs, nil
}

var (
	kindIPPool    = ipamv1alpha1.GroupVersion.WithKind("IPPool").GroupKind()
	kindIPClaim   = ipamv1alpha1.GroupVersion.WithKind("IPClaim").GroupKind()
	kindIPAddress = ipamv1alpha1.GroupVersion.WithKind("IPAddress").GroupKind()
)

// invalid wraps errs the way kubectl prints them: the field path and the reason of each.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

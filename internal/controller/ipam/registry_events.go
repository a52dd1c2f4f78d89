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

package ipam

import (
	"context"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// holding is what an IPAddress object of either kind says about its pool.
type holding struct {
	pool types.NamespacedName
	addr netip.Addr
	key  string
	uid  types.UID
}

func holdingOf(obj any) (holding, bool) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch o := obj.(type) {
	case *ipamv1alpha1.IPAddress:
		a, key, ok := metal3Holder(o)
		return holding{types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.Pool.Name}, a, key, o.UID}, ok && o.Spec.Pool.Name != ""
	case *capiipamv1beta2.IPAddress:
		a, key, ok := capiHolder(o)
		return holding{types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.PoolRef.Name}, a, key, o.UID}, ok
	}
	return holding{}, false
}

// Watch keeps the allocators current from the IPAddress informers of both kinds. The cache
// stores an object before it calls any handler, which is what makes the first build (a
// listing of the cache) and the events agree.
func (r *Registry) Watch(ctx context.Context, c cache.Cache) error {
	kinds := []client.Object{&ipamv1alpha1.IPAddress{}}
	if r.capi {
		kinds = append(kinds, &capiipamv1beta2.IPAddress{})
	}
	for _, obj := range kinds {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { r.apply(o, true) },
			UpdateFunc: func(old, o any) {
				// Most updates touch metadata only; releasing and taking the address again
				// would let a concurrent claim grab it in between.
				if a, b := fromOld(old), fromOld(o); a == b {
					return
				}
				r.apply(old, false)
				r.apply(o, true)
			},
			DeleteFunc: func(o any) {
				r.apply(o, false)
				if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
					o = t.Obj
				}
				if obj, ok := o.(client.Object); ok {
					r.unblock(obj.GetUID())
				}
			},
		}); err != nil {
			return err
		}
	}
	return nil
}

func (r *Registry) apply(obj any, present bool) {
	h, ok := holdingOf(obj)
	if !ok {
		return
	}
	s := r.built(h.pool)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyHolding(h, present)
}

func fromOld(obj any) holding {
	h, _ := holdingOf(obj)
	return h
}

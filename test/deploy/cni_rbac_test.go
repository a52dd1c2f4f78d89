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

package deploy

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// The rendered configuration's names: config/default's namespace and prefix.
const (
	operatorNS = "rackwire-system"
	cniAccount = "system:serviceaccount:" + operatorNS + ":rackwire-cni"
)

// checkCNIPermissions acts as the CNI plugin's ServiceAccount, with the RBAC config/default
// rendered and applied: what the plugin does in the pools' namespace (the operator's) works;
// a Lease in kube-node-lease or kube-system, a reservation elsewhere, an IPPool's deletion and
// a list of pods are refused. Its token is on every node: this is what root on a node gets.
func checkCNIPermissions(ctx context.Context, t *testing.T, admin *rest.Config, c client.Client) {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: cniAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNS, "system:authenticated"}}
	plugin, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"default", "apps"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("the plugin may %s, but: %v", what, err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("the plugin may not %s, but the apiserver answered %v", what, err)
		}
	}

	// Leases: none, by default; not even in the pools' namespace, where the manager's
	// leader-election Lease lives.
	for _, l := range []client.Object{
		&coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "worker-1"}},
		&coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-scheduler"}},
		&coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "rackwire.metal3.io"}},
	} {
		if err := c.Create(ctx, l); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		cur := &coordv1.Lease{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(l), cur); err != nil {
			t.Fatal(err)
		}
		holder := "node-root"
		cur.Spec.HolderIdentity = &holder
		refused(fmt.Sprintf("update Lease %s/%s", l.GetNamespace(), l.GetName()), plugin.Update(ctx, cur))
		refused(fmt.Sprintf("read Lease %s/%s", l.GetNamespace(), l.GetName()), plugin.Get(ctx, client.ObjectKeyFromObject(l), &coordv1.Lease{}))
		refused("create a Lease in "+l.GetNamespace(),
			plugin.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.GetNamespace(), Name: "whereabouts"}}))
	}
	// The opt-in Role for networks that set whereabouts_lease: whereabouts' Lease in the
	// pools' namespace, and nowhere else.
	optIn, err := controlplane.ReadObjects("../../config/cni/whereabouts-lease.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, c, "config/cni/whereabouts-lease.yaml", optIn)
	own := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "whereabouts"}}
	// The authorizer sees a new Role within moments, not at once.
	err = plugin.Create(ctx, own)
	for deadline := time.Now().Add(10 * time.Second); apierrors.IsForbidden(err) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		err = plugin.Create(ctx, own)
	}
	allowed("create whereabouts' Lease in the pools' namespace (opt-in Role)", err)
	holder := "worker-1"
	own.Spec.HolderIdentity = &holder
	allowed("update whereabouts' Lease in the pools' namespace (opt-in Role)", plugin.Update(ctx, own))
	refused("create a Lease in kube-system (opt-in Role)",
		plugin.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "whereabouts"}}))

	// whereabouts' objects in the pools' namespace: the plugin's verbs.
	pool := wbObject("IPPool", operatorNS, "blue-10.70.0.0-24", map[string]any{"range": "10.70.0.0/24", "allocations": map[string]any{}})
	allowed("create an IPPool", plugin.Create(ctx, pool))
	allowed("read an IPPool", plugin.Get(ctx, client.ObjectKeyFromObject(pool), wbObject("IPPool", "", "", nil)))
	allowed("list IPPools (STATUS)", plugin.List(ctx, wbList("IPPoolList"), client.InNamespace(operatorNS), client.Limit(1)))
	allowed("patch an IPPool", plugin.Patch(ctx, pool, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/spec/allocations/5","value":{"id":"c1","podref":"apps/web-1","ifname":"net1"}}]`))))
	refused("delete an IPPool", plugin.Delete(ctx, pool))
	res := wbObject("OverlappingRangeIPReservation", operatorNS, "blue-10.70.0.5", map[string]any{"containerid": "c1", "podref": "apps/web-1"})
	allowed("create a reservation", plugin.Create(ctx, res))
	allowed("read a reservation", plugin.Get(ctx, client.ObjectKeyFromObject(res), wbObject("OverlappingRangeIPReservation", "", "", nil)))
	allowed("list the IPAMClaims' reservations (the node's view)", plugin.List(ctx, wbList("OverlappingRangeIPReservationList"),
		client.InNamespace(operatorNS), client.MatchingLabels{"app.kubernetes.io/managed-by": "rackwire"}))
	allowed("delete a reservation in the pools' namespace", plugin.Delete(ctx, res))
	// NodeSlicePools pass the manager's webhook, which does not run here: a read of one that
	// does not exist is answered NotFound when allowed, Forbidden when not.
	err = plugin.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: "blue"}, wbObject("NodeSlicePool", "", "", nil))
	allowed("read a NodeSlicePool", client.IgnoreNotFound(err))
	refused("read a NodeSlicePool in kube-system", plugin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "blue"}, wbObject("NodeSlicePool", "", "", nil)))

	// Reservations elsewhere are someone else's (whereabouts' in kube-system, another
	// deployment's).
	for _, ns := range []string{"kube-system", "default"} {
		other := wbObject("OverlappingRangeIPReservation", ns, "10.70.0.9", map[string]any{"containerid": "c9", "podref": "apps/db-0"})
		if err := c.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		refused("delete a reservation in "+ns, plugin.Delete(ctx, other))
		refused("create a reservation in "+ns,
			plugin.Create(ctx, wbObject("OverlappingRangeIPReservation", ns, "10.70.0.10", map[string]any{"containerid": "c1", "podref": "apps/web-1"})))
		refused("patch an IPPool in "+ns, plugin.Patch(ctx, wbObject("IPPool", ns, "x", nil), client.RawPatch(types.MergePatchType, []byte(`{}`))))
	}

	// Pods: one read by name, where its network-selection element may name a claim.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	allowed("read a pod", plugin.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	refused("list pods", plugin.List(ctx, &corev1.PodList{}))
	refused("delete a pod", plugin.Delete(ctx, pod))
	refused("list Nodes", plugin.List(ctx, &corev1.NodeList{}))
	allowed("create an Event on a pod", plugin.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "apps", GenerateName: "web-1."},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "apps", Name: "web-1"}, Reason: "Test", Message: "test"}))

	// IPAMClaims (their CRD is not part of config/default): asked of the authorizer.
	// list: a launcher pod admitted without its claim reference finds its VM's claim.
	for verb, want := range map[string]bool{"get": true, "list": true, "update": false, "delete": false} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: cniAccount, Groups: cfg.Impersonate.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "apps", Verb: verb, Group: "k8s.cni.cncf.io", Resource: "ipamclaims"},
		}}
		if err := c.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != want {
			t.Errorf("the plugin may %s IPAMClaims: %v, want %v", verb, review.Status.Allowed, want)
		}
	}
}

func wbObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("whereabouts.cni.cncf.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func wbList(kind string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("whereabouts.cni.cncf.io/v1alpha1")
	l.SetKind(kind)
	return l
}

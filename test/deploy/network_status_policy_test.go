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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controlplane"
)

const networkStatus = "k8s.v1.cni.cncf.io/network-status"

// checkNetworkStatusPolicy applies config/cni/network-status-policy.yaml, the condition of
// the manager's --ip-reconciler-trust-network-status: a tenant allowed by RBAC to update its
// pods may not write their network-status (create, change, remove), through pods or
// pods/status; Multus' ServiceAccount may; other annotations stay the tenant's.
func checkNetworkStatusPolicy(ctx context.Context, t *testing.T, admin *rest.Config, c client.Client) {
	const ns = "netstatus"
	as := func(user string, groups ...string) client.Client {
		cfg := rest.CopyConfig(admin)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
		cl, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	tenant := as("system:serviceaccount:"+ns+":deployer", "system:serviceaccounts", "system:serviceaccounts:"+ns)
	multus := as("system:serviceaccount:kube-system:multus", "system:serviceaccounts", "system:serviceaccounts:kube-system")

	// RBAC as a tenant and Multus have it: pods of the tenant's namespace; every pod and its
	// status for Multus (as Multus' own manifests grant).
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "create", "update", "patch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pods"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "deployer"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "multus"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/status"}, Verbs: []string{"get", "update", "patch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "multus"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "multus"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "multus"}}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	}
	web := pod("web-0", nil)
	// The authorizer sees the new bindings within moments, not at once.
	err := tenant.Create(ctx, web)
	for deadline := time.Now().Add(10 * time.Second); apierrors.IsForbidden(err) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		err = tenant.Create(ctx, web)
	}
	if err != nil {
		t.Fatalf("the tenant may create its pod: %v", err)
	}

	objs, err := controlplane.ReadObjects("../../config/cni/network-status-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, c, "config/cni/network-status-policy.yaml", objs)

	// update sets (or, with value "", removes) the annotation on a fresh copy of web-0.
	update := func(cl client.Client, status bool, key, value string) error {
		cur := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), cur); err != nil {
			t.Fatal(err)
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		if value == "" {
			delete(cur.Annotations, key)
		} else {
			cur.Annotations[key] = value
		}
		if status {
			return cl.Status().Update(ctx, cur)
		}
		return cl.Update(ctx, cur)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), networkStatus) {
			t.Errorf("%s: want a refusal naming %s, got %v", what, networkStatus, err)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	forged := `[{"name":"` + ns + `/onyx","interface":"net1","ips":["10.66.200.5"]}]`
	// The apiserver loads a new policy within moments, not at once: until then a tenant's pod
	// created with the annotation is admitted.
	probe := func() error {
		p := pod("", map[string]string{networkStatus: forged})
		p.GenerateName = "probe-"
		return tenant.Create(ctx, p)
	}
	err = probe()
	for deadline := time.Now().Add(20 * time.Second); err == nil && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		err = probe()
	}
	refused("the tenant creates a pod with a network-status", err)
	refused("the tenant writes its pod's network-status", update(tenant, false, networkStatus, forged))
	allowed("the tenant writes another annotation of its pod", update(tenant, false, "example.com/owner", "team-a"))

	written := `[{"name":"` + ns + `/onyx","interface":"net1","ips":["10.66.200.6"]}]`
	allowed("Multus writes network-status through pods/status", update(multus, true, networkStatus, written))
	allowed("Multus rewrites network-status through pods", update(multus, false, networkStatus, written+" "))
	refused("the tenant changes network-status Multus wrote", update(tenant, false, networkStatus, forged))
	refused("the tenant removes network-status Multus wrote", update(tenant, false, networkStatus, ""))
	allowed("the tenant updates its pod leaving network-status as Multus wrote it", update(tenant, false, "example.com/owner", "team-b"))
	// Not even the cluster's admins: the reconciler's evidence is Multus' word alone.
	refused("an admin writes network-status", update(c, false, networkStatus, forged))
}

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

package cni_test

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// invalidPolicy makes the apiserver turn down, with 422 Invalid (the reason an operator's
// policy may well choose), every IPPool write for which expression is false, and waits until
// probe (a pool it must refuse) is refused. It returns the function that lifts it.
func invalidPolicy(t *testing.T, name, expression, message string, probe func() error) func() {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{wbv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"ippools"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: message, Reason: ptr.To(metav1.StatusReasonInvalid)}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	lift := func() {
		for _, o := range []client.Object{binding, policy} {
			if err := client.IgnoreNotFound(k8s.Delete(ctx, o)); err != nil {
				t.Error(err)
			}
		}
	}
	for _, o := range []client.Object{policy, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(lift)
	eventually(t, func() error {
		err := probe()
		if err == nil {
			return errors.New("the policy is not in force yet")
		}
		if !strings.Contains(err.Error(), message) {
			return err
		}
		return nil
	})
	return lift
}

// TestAddFailsOnARefusedPoolWrite: where the ADD writes the pool itself (no node slices), a
// write the apiserver turns down with 422 Invalid is a refusal, not the offset taken
// meanwhile: the ADD fails naming it (it went on reading the pool and writing it again until
// its timeout) and keeps nothing.
func TestAddFailsOnARefusedPoolWrite(t *testing.T) {
	const msg = "pod tenant/c-sync-refused may hold no address here"
	conf := netConf("1.1.0", "syncrefused", `"range":"10.74.1.0/24","timeout":"5s"`)
	ok := attachment{conf: conf, container: "c-sync-ok", pod: "c-sync-ok"}
	ok.mustAdd(t) // the pool
	invalidPolicy(t, "cni-sync-refused",
		"!has(object.spec.allocations) || object.spec.allocations.all(k, object.spec.allocations[k].podref != 'tenant/c-sync-refused')", msg,
		func() error {
			p := ippool(t, "syncrefused-10.74.1.0-24")
			p.Spec.Allocations["200"] = wbv1.IPAllocation{ContainerID: "c", PodRef: "tenant/c-sync-refused", IfName: "net1"}
			return k8s.Update(context.Background(), p, client.DryRunAll)
		})
	refused := attachment{conf: conf, container: "c-sync-refused", pod: "c-sync-refused"}
	_, _, err := refused.add()
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("ADD whose pool write is refused: %v, want the refusal", err)
	}
	for _, al := range ippool(t, "syncrefused-10.74.1.0-24").Spec.Allocations {
		if al.ContainerID == refused.container {
			t.Errorf("the refused ADD is in the pool")
		}
	}
	if _, ok := reservation(t, cni.ReservationName("syncrefused", netip.MustParseAddr("10.74.1.2"))); ok {
		t.Errorf("the refused ADD left its reservation")
	}
	if err := ok.del(); err != nil {
		t.Fatal(err)
	}
}

// TestDelKeepsWhatARefusedRemovalLeaves: a DEL whose pool entry removal the apiserver turns
// down with 422 Invalid fails and keeps its record, instead of taking the refusal for the
// entry taken over by another sandbox, answering, and leaving the entry and the reservation
// to nobody. Once the refusal is lifted the next DEL frees both.
func TestDelKeepsWhatARefusedRemovalLeaves(t *testing.T) {
	const msg = "pod tenant/c-sync-pinned keeps its address"
	t.Setenv("NODENAME", "node-pin")
	conf := netConf("1.1.0", "syncpinned", `"range":"10.74.2.0/24"`)
	pinned := attachment{conf: conf, container: "c-sync-pinned", pod: "c-sync-pinned"}
	addr := firstAddr(t, pinned)
	pool := "syncpinned-10.74.2.0-24"
	lift := invalidPolicy(t, "cni-sync-pinned",
		"oldObject == null || oldObject.spec.allocations.all(k, oldObject.spec.allocations[k].podref != 'tenant/c-sync-pinned' || k in object.spec.allocations)", msg,
		func() error {
			p := ippool(t, pool)
			p.Spec.Allocations = map[string]wbv1.IPAllocation{}
			return k8s.Update(context.Background(), p, client.DryRunAll)
		})
	err := pinned.del()
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("DEL whose removal is refused: %v, want the refusal", err)
	}
	if len(ippool(t, pool).Spec.Allocations) != 1 {
		t.Fatalf("the refused removal landed")
	}
	recs, _ := filepath.Glob(filepath.Join(stateDir, "node-pin", "syncpinned@*", "c-sync-pinned_net1"))
	if len(recs) != 1 {
		t.Errorf("the DEL dropped its record with the entry and the reservation left: %v", recs)
	}
	lift()
	eventually(t, pinned.del)
	if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
		t.Errorf("the pool still holds %v", got)
	}
	if _, ok := reservation(t, cni.ReservationName("syncpinned", addr)); ok {
		t.Errorf("the reservation of %s is left", addr)
	}
}

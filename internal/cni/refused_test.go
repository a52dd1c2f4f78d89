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
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

const refusedMessage = "pod tenant/c-refused may hold no address"

// refusePodInPools makes the apiserver turn down every IPPool write that records the pod
// tenant/c-refused (a ValidatingAdmissionPolicy, as an operator's own rules would), and waits
// until the policy is in force. It returns the function that lifts it.
func refusePodInPools(t *testing.T) func() {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "cni-refused-pod"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{wbv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"ippools"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.spec.allocations) || object.spec.allocations.all(k, object.spec.allocations[k].podref != 'tenant/c-refused')",
				Message:    refusedMessage,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
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
		probe := &wbv1.IPPool{}
		probe.Name, probe.Namespace = "refusal-probe", poolNS
		probe.Spec = wbv1.IPPoolSpec{Range: "10.80.255.0/24", Allocations: map[string]wbv1.IPAllocation{"1": {ContainerID: "c", PodRef: "tenant/c-refused", IfName: "net1"}}}
		err := k8s.Create(ctx, probe, client.DryRunAll)
		if err == nil {
			return errors.New("the policy is not in force yet")
		}
		if !strings.Contains(err.Error(), refusedMessage) {
			return err
		}
		return nil
	})
	return lift
}

// checkOf runs CHECK of container id with a as prevResult.
func checkOf(t *testing.T, conf []byte, id string, a netip.Addr) error {
	t.Helper()
	prev := &current.Result{CNIVersion: "1.1.0", IPs: []*current.IPConfig{{Address: net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(24, 32)}}}}
	return attachment{conf: conf, container: id, pod: id}.check(t, "1.1.0", prev)
}

// TestCheckFailsOnARefusedPoolWrite: the apiserver turns down, for certain, the flusher's
// write of one attachment's pool entry (the pool's first). The ADD has answered already;
// CHECK of that attachment fails naming the address and the refusal, while the node's other
// attachment, written in the same pool, passes. Once the refusal is lifted the entry is written and CHECK passes.
func TestCheckFailsOnARefusedPoolWrite(t *testing.T) {
	// The refused attachment comes first: its refusal holds back neither the pool's create
	// nor the other attachment's entry.
	checkNamesTheRefusal(t, refusalCase{
		name: "refusednet", node: "node-f", net: "10.80.0", ok: "c-ok", refused: "c-refused",
		message: refusedMessage, refusedFirst: true, refuse: refusePodInPools,
	})
}

// refusalCase is a node-slice network whose pool writes recording the pod tenant/<refused>
// the apiserver turns down (refuse, which answers message) until lifted, beside the pod
// tenant/<ok>; net is the /24's first three octets, its node's slice the second /28.
type refusalCase struct {
	name, node, net, ok, refused, message string
	refusedFirst                          bool
	refuse                                func(*testing.T) func()
}

// checkNamesTheRefusal: CHECK of the refused attachment fails naming its address and the
// refusal, CHECK of the other passes; once lifted, the entry lands and CHECK passes; the DELs
// then leave neither pool entry nor reservation.
func checkNamesTheRefusal(t *testing.T, c refusalCase) {
	t.Helper()
	t.Setenv("NODENAME", c.node)
	sliceRange := c.net + ".16/28"
	slicePool(t, c.name, c.net+".0/24", "/28", wbv1.NodeSliceAllocation{NodeName: c.node, SliceRange: sliceRange})
	slice, pool := netip.MustParsePrefix(sliceRange), c.name+"-"+c.node+"-"+c.net+".16-28"
	conf := netConf("1.1.0", c.name, `"range":"`+c.net+`.0/24","node_slice_size":"/28"`)
	lift := c.refuse(t)
	var ok, refused netip.Addr
	refusedArgs := "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + c.refused + ";K8S_POD_UID=uid-" + c.refused
	if c.refusedFirst {
		refused = addProcessArgs(t, conf, c.node, c.refused, refusedArgs)
		ok = addProcess(t, conf, c.node, c.ok)
	} else {
		ok = addProcess(t, conf, c.node, c.ok)
		refused = addProcessArgs(t, conf, c.node, c.refused, refusedArgs)
	}
	poolEntry(t, pool, slice, ok, c.ok)
	eventually(t, func() error {
		err := checkOf(t, conf, c.refused, refused)
		if err == nil {
			return fmt.Errorf("CHECK of %s passes, its pool entry refused", c.refused)
		}
		if !strings.Contains(err.Error(), refused.String()) || !strings.Contains(err.Error(), c.message) {
			return fmt.Errorf("CHECK of %s does not name %s and the refusal: %v", c.refused, refused, err)
		}
		return nil
	})
	if err := checkOf(t, conf, c.ok, ok); err != nil {
		t.Errorf("CHECK of %s: %v", c.ok, err)
	}
	// The pod is told once, however often the flusher tries again meanwhile.
	dir := netDir(t, c.node, c.name)
	eventually(t, func() error {
		if tries, _ := entryOf(t, dir, c.refused)["tries"].(float64); tries < 3 {
			return fmt.Errorf("the flusher has tried %s's entry %v times, not 3 yet", c.refused, tries)
		}
		return nil
	})
	evs := refusalEvents(t, c.refused, pool)
	if len(evs) != 1 {
		t.Errorf("%d PoolWriteRefused Events on pod %s after 3 refusals, want 1: %+v", len(evs), c.refused, evs)
	}
	for _, ev := range evs {
		for _, want := range []string{pool, refused.String(), c.message} {
			if !strings.Contains(ev.Message, want) {
				t.Errorf("Event on pod %s does not name %q: %s", c.refused, want, ev.Message)
			}
		}
		if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.UID != types.UID("uid-"+c.refused) {
			t.Errorf("Event on pod %s: type %s, involved object %+v", c.refused, ev.Type, ev.InvolvedObject)
		}
	}
	lift()
	poolEntry(t, pool, slice, refused, c.refused)
	if err := checkOf(t, conf, c.refused, refused); err != nil {
		t.Errorf("CHECK of %s once written: %v", c.refused, err)
	}
	for _, id := range []string{c.ok, c.refused} {
		if _, err := runPlugin("DEL", conf, id, c.node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() error {
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool still holds %v", got)
		}
		for _, a := range []netip.Addr{ok, refused} {
			if _, ok := reservation(t, cni.ReservationName(c.name, a)); ok {
				return fmt.Errorf("reservation of %s left", a)
			}
		}
		return nil
	})
	flusherGone(t, netDir(t, c.node, c.name))
}

// refusalEvents are the PoolWriteRefused Events on pod tenant/<pod> about IPPool pool (tests
// of other pools refuse pods of the same name).
func refusalEvents(t *testing.T, pod, pool string) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := k8s.List(context.Background(), list, client.InNamespace("tenant")); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "Pod" && ev.InvolvedObject.Name == pod && ev.Reason == "PoolWriteRefused" &&
			strings.Contains(ev.Message, "IPPool "+pool+" ") {
			out = append(out, ev)
		}
	}
	return out
}

// TestRefusalsTold: what the flusher records as a refusal, told from the apiserver's own
// answers: a write an admission policy turns down is one; a JSON patch whose test failed (the
// pool changed), a conflict, a throttle and every kind of timeout prove nothing of the kind.
func TestRefusalsTold(t *testing.T) {
	ctx := context.Background()
	refusePodInPools(t)
	p := &wbv1.IPPool{}
	p.Name, p.Namespace = "refusals-told", poolNS
	p.Spec = wbv1.IPPoolSpec{Range: "10.80.1.0/24", Allocations: map[string]wbv1.IPAllocation{"1": {ContainerID: "c", PodRef: "tenant/c-ok", IfName: "net1"}}}
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	stale := p.DeepCopy()
	p.Spec.Allocations["2"] = wbv1.IPAllocation{ContainerID: "d", PodRef: "tenant/c-ok", IfName: "net1"}
	if err := k8s.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	patch := func(ops string) error {
		return k8s.Patch(ctx, p.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(ops)))
	}
	deadline, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	for _, c := range []struct {
		what string
		err  error
		want bool
	}{
		{"admission policy", patch(`[{"op":"add","path":"/spec/allocations/3","value":{"id":"e","podref":"tenant/c-refused","ifname":"net1"}}]`), true},
		{"patch test failed", patch(`[{"op":"test","path":"/spec/allocations/1","value":null},{"op":"add","path":"/spec/allocations/1","value":{"id":"e","podref":"tenant/c-ok","ifname":"net1"}}]`), false},
		{"conflict", k8s.Update(ctx, stale), false},
		{"client timeout", k8s.Get(deadline, client.ObjectKeyFromObject(p), &wbv1.IPPool{}), false},
		{"server timeout", apierrors.NewTimeoutError("the request timed out", 1), false},
		{"gateway timeout", apierrors.NewGenericServerResponse(http.StatusGatewayTimeout, "PATCH", wbv1.GroupVersion.WithResource("ippools").GroupResource(), p.Name, "", 0, true), false},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), false},
	} {
		if c.err == nil {
			t.Errorf("%s: the apiserver took the write", c.what)
			continue
		}
		if got := cni.RefusedForGood(c.err); got != c.want {
			t.Errorf("%s (%v): refused for good %v, want %v", c.what, c.err, got, c.want)
		}
	}
	if err := k8s.Delete(ctx, p); err != nil {
		t.Error(err)
	}
}

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
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

const webhookRefusal = "pod tenant/c-wh-refused may hold no address"

// refuseByWebhook makes an admission webhook turn down every IPPool write that records the pod
// tenant/c-wh-refused, answering 422 with no details (as a webhook may: the code is its own
// choice), and waits until it is in force. It returns the function that lifts it.
func refuseByWebhook(t *testing.T) func() {
	t.Helper()
	ctx := context.Background()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rev := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(rev); err != nil || rev.Request == nil {
			http.Error(w, "no AdmissionReview", http.StatusBadRequest)
			return
		}
		p := &wbv1.IPPool{}
		_ = json.Unmarshal(rev.Request.Object.Raw, p)
		resp := &admissionv1.AdmissionResponse{UID: rev.Request.UID, Allowed: true}
		for _, a := range p.Spec.Allocations {
			if a.PodRef == "tenant/c-wh-refused" {
				resp.Allowed = false
				resp.Result = &metav1.Status{Code: http.StatusUnprocessableEntity, Message: webhookRefusal}
			}
		}
		rev.Response, rev.Request = resp, nil
		_ = json.NewEncoder(w).Encode(rev)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "cni-refused-by-webhook"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "ippools.refuse.rackwire.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate"), CABundle: ca},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{wbv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"ippools"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := k8s.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	probe := func() error {
		p := &wbv1.IPPool{}
		p.Name, p.Namespace = "webhook-probe", poolNS
		p.Spec = wbv1.IPPoolSpec{Range: "10.80.254.0/24", Allocations: map[string]wbv1.IPAllocation{"1": {ContainerID: "c", PodRef: "tenant/c-wh-refused", IfName: "net1"}}}
		return k8s.Create(ctx, p, client.DryRunAll)
	}
	// Lifted once the apiserver calls the webhook no more: the tests after this one must
	// not meet its server closed (the failure policy would turn their writes down).
	lift := func() {
		if err := client.IgnoreNotFound(k8s.Delete(ctx, hook)); err != nil {
			t.Error(err)
		}
		eventually(t, probe)
	}
	t.Cleanup(lift)
	eventually(t, func() error {
		err := probe()
		if err == nil {
			return errors.New("the webhook is not in force yet")
		}
		if !strings.Contains(err.Error(), webhookRefusal) {
			return err
		}
		return nil
	})
	return lift
}

// TestCheckFailsOnAWebhookRefusal: an admission webhook that turns the flusher's write down
// with 422 and nothing else is a refusal, not a JSON patch test that failed: CHECK of the
// attachment fails naming it, however often the flusher tries, until the write lands.
func TestCheckFailsOnAWebhookRefusal(t *testing.T) {
	checkNamesTheRefusal(t, refusalCase{
		name: "whrefusednet", node: "node-wh", net: "10.80.2", ok: "c-wh-ok", refused: "c-wh-refused",
		message: webhookRefusal, refuse: refuseByWebhook,
	})
}

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
	"net/http"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// HostDeleteWebhook pauses a wired host before its deletion is admitted. A mutating webhook
// cannot change an object on DELETE, and BMO starts deprovisioning a provisioned host as soon
// as it sees it deleted: were the pause written after, by the controller, BMO could boot the
// ramdisk while the host's ports still carry its tenant's VLANs. So this webhook writes
// rackwire's pause itself (sideEffects NoneOnDryRun: nothing on a dry run), and the apiserver,
// whose deletion then meets a newer object, admits it again and deletes the paused host. It
// refuses a deletion only when that pause cannot be written: a namespace's deletion never
// waits on it while the manager runs. Registered in config/webhook/host.yaml for wired hosts
// only, failing closed like the UPDATE registration.
type HostDeleteWebhook struct {
	Reader  client.Reader
	Writer  client.Writer
	Decoder admission.Decoder
}

// pauseAttempts bounds the retries of a pause that lost a race with another host writer.
const pauseAttempts = 3

// Handle implements admission.Handler.
func (w HostDeleteWebhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	old := &metal3v1alpha1.BareMetalHost{}
	if err := w.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	for range pauseAttempts {
		pause, err := w.needsPause(ctx, old)
		if err != nil {
			return refused(old, err)
		}
		if !pause {
			return admission.Allowed("")
		}
		if req.DryRun != nil && *req.DryRun {
			return admission.Allowed("").WithWarnings("rackwire would pause the host before deleting it: its switch ports do not carry the provisioning network yet")
		}
		base := old.DeepCopy()
		if old.Annotations == nil {
			old.Annotations = map[string]string{}
		}
		old.Annotations[metal3v1alpha1.PausedAnnotation] = networkv1alpha1.PausedByRackwire
		err = w.Writer.Patch(ctx, old, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			return admission.Allowed("rackwire paused the host before its deletion; it lets BMO deprovision it once its switch ports carry the provisioning network")
		case apierrors.IsNotFound(err):
			return admission.Allowed("")
		case !apierrors.IsConflict(err):
			return refused(old, err)
		}
		// Another writer came first: decide again on what it wrote.
		if err := w.Reader.Get(ctx, client.ObjectKeyFromObject(old), old); err != nil {
			if apierrors.IsNotFound(err) {
				return admission.Allowed("")
			}
			return refused(old, err)
		}
	}
	return refused(old, fmt.Errorf("the host changed %d times while rackwire tried to pause it", pauseAttempts))
}

// needsPause says whether BMO, seeing the host deleted, could act on it while its ports do
// not carry what it then needs (the provisioning network: BMO deprovisions a provisioned host).
func (w HostDeleteWebhook) needsPause(ctx context.Context, host *metal3v1alpha1.BareMetalHost) (bool, error) {
	if !host.DeletionTimestamp.IsZero() {
		return false, nil // already deleted: the controller holds it (and BMO saw it paused then)
	}
	if _, paused := host.Annotations[metal3v1alpha1.PausedAnnotation]; paused {
		return false, nil // BMO does nothing; lifting a pause goes through the UPDATE webhook
	}
	deleted := host.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	need := hostlink.NetworkOf(deleted)
	if need == networkv1alpha1.NetworkClean {
		return false, nil // BMO has nothing left to do with the host
	}
	link, err := HostHoldWebhook{Reader: w.Reader}.linkOf(ctx, host)
	if err != nil {
		return false, err
	}
	// In doubt (no HostLink status yet) the host is paused: the controller lifts a pause it
	// finds nothing to hold for, while a port driven but not yet recorded would be missed.
	return !carries(link, need), nil
}

func refused(host *metal3v1alpha1.BareMetalHost, err error) admission.Response {
	return admission.Denied(fmt.Sprintf("rackwire could not pause BareMetalHost %s/%s before its deletion (%v): deleted unpaused, "+
		"BMO would deprovision it while its switch ports may still carry its tenant's networks; retry, or pause it first (annotation %s)",
		host.Namespace, host.Name, err, metal3v1alpha1.PausedAnnotation))
}

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

package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

func isExhausted(err error) bool { return errors.Is(err, ErrExhausted) }

// event records a Warning on the pod, best effort: the CNI error is what the runtime
// reports; the Event is what `kubectl describe pod` shows.
func (c *call) event(reason, message string) {
	if c.podName == "" || c.podNS == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: c.podName + ".", Namespace: c.podNS},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: c.podNS, Name: c.podName, UID: ktypes.UID(c.podUID),
		},
		Reason:         reason,
		Message:        message,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "rackwire-cni", Host: c.node},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	_ = c.kube.once(ctx, "POST", "/api/v1/namespaces/"+c.podNS+"/events", "", mustJSON(ev), nil)
}

// refusedWrite is a pending entry whose pool write the apiserver turned down for certain.
type refusedWrite struct {
	rec   *record
	entry entry
}

// tellRefused sends a Warning on the pod of each refused write: its ADD answered before the
// write, so the runtime heard nothing of it, and only CHECK, which not every runtime runs,
// says so otherwise.
func (c *call) tellRefused(refusals []refusedWrite) {
	for _, w := range refusals {
		ns, name, ok := cutRef(w.rec.PodRef)
		if !ok {
			continue // no pod to tell
		}
		pod := *c
		pod.podNS, pod.podName, pod.podUID = ns, name, w.rec.PodUID
		pod.event("PoolWriteRefused", fmt.Sprintf("IPPool %s did not take %s for container %s, interface %s (the address stays reserved; the write is tried again): %s",
			w.entry.Pool, w.entry.Address, w.rec.ContainerID, w.rec.IfName, w.entry.Refused))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encoding %T: %v", v, err))
	}
	return b
}

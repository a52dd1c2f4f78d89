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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// podEvent is the part of a core/v1 Event the plugin writes. The plugin does not link
// k8s.io/api/core/v1: its package initialisation alone is a tenth of a millisecond of every
// verb's CPU, and the plugin needs one type of it.
type podEvent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	InvolvedObject    eventObject `json:"involvedObject"`
	Reason            string      `json:"reason,omitempty"`
	Message           string      `json:"message,omitempty"`
	Source            eventSource `json:"source,omitempty"`
	FirstTimestamp    metav1.Time `json:"firstTimestamp,omitempty"`
	LastTimestamp     metav1.Time `json:"lastTimestamp,omitempty"`
	Count             int32       `json:"count,omitempty"`
	Type              string      `json:"type,omitempty"`
}

type eventObject struct {
	Kind       string     `json:"kind,omitempty"`
	Namespace  string     `json:"namespace,omitempty"`
	Name       string     `json:"name,omitempty"`
	UID        ktypes.UID `json:"uid,omitempty"`
	APIVersion string     `json:"apiVersion,omitempty"`
}

type eventSource struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}

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
	ev := &podEvent{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: c.podName + ".", Namespace: c.podNS},
		InvolvedObject: eventObject{
			APIVersion: "v1", Kind: "Pod", Namespace: c.podNS, Name: c.podName, UID: ktypes.UID(c.podUID),
		},
		Reason:         reason,
		Message:        message,
		Type:           "Warning",
		Source:         eventSource{Component: "rackwire-cni", Host: c.node},
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

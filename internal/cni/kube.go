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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// kube is the plugin's apiserver client: plain JSON over the kubeconfig's transport. A
// plugin process lives for one verb, so it stays clear of client-go and its start-up cost
// (see kubeconfig.go).
type kube struct {
	base      string
	http      *http.Client
	auth      *authHeaders
	namespace string
	// requests counts the requests sent, for the benchmark's requests per ADD.
	requests atomic.Int64
	// largestAnswer is the largest pool the apiserver answered a write of with, in bytes,
	// since the flusher last set it to zero.
	largestAnswer atomic.Int64
}

// answered notes the size of a pool the apiserver answered a write with.
func (k *kube) answered(answer []byte) {
	for n := int64(len(answer)); ; {
		old := k.largestAnswer.Load()
		if old >= n || k.largestAnswer.CompareAndSwap(old, n) {
			return
		}
	}
}

// whereabouts' objects live in the namespace of the kubeconfig's context, else kube-system.
func newKube(kubeconfig string) (*kube, error) {
	cfg, err := loadKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	ns := cfg.namespace
	if ns == "" {
		ns = metav1.NamespaceSystem
	}
	return &kube{base: cfg.server, http: cfg.httpClient(), auth: cfg.auth, namespace: ns}, nil
}

// userAgent names the plugin in the apiserver's audit log and as the field manager of what
// it writes.
const userAgent = "rackwire-cni"

const (
	wbGroup     = "/apis/whereabouts.cni.cncf.io/v1alpha1"
	requestWait = 10 * time.Second
)

func (k *kube) wbPath(resource, name string) string {
	p := wbGroup + "/namespaces/" + k.namespace + "/" + resource
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// do sends one request and decodes the answer into out. It retries, until ctx ends, what
// did not reach the apiserver or what the apiserver asks to retry (5xx, 429); every other
// answer is returned as an apierrors status error.
func (k *kube) do(ctx context.Context, method, path, contentType string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if b, ok := body.([]byte); ok {
			payload = b
		} else if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	backoff := 50 * time.Millisecond
	for {
		err := k.once(ctx, method, path, contentType, payload, out)
		if err == nil || !retriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w (last error: %v)", method, path, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func retriable(err error) bool {
	if errors.As(err, new(credentialError)) {
		return false
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		c := se.Status().Code
		return c >= 500 || c == http.StatusTooManyRequests
	}
	return true
}

func (k *kube) once(ctx context.Context, method, path, contentType string, payload []byte, out any) error {
	rctx, cancel := context.WithTimeout(ctx, requestWait)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(rctx, method, k.base+path, rd)
	if err != nil {
		return err
	}
	accept := "application/json"
	if a, ok := ctx.Value(acceptKey{}).(string); ok {
		accept = a
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	sent, err := k.auth.set(rctx, req.Header)
	if err != nil {
		return err
	}
	if payload != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	k.requests.Add(1)
	resp, err := k.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusUnauthorized && sent != nil {
		k.auth.exec.turnedDown(sent)
		// A client certificate from the program stays on open connections: close them.
		k.http.CloseIdleConnections()
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		st := &metav1.Status{}
		if json.Unmarshal(data, st) != nil || st.Kind != "Status" {
			st = &metav1.Status{Status: metav1.StatusFailure, Code: int32(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		}
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: *st}
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// acceptKey carries, in a request's context, an Accept other than plain JSON.
type acceptKey struct{}

// metadataListAccept asks for a list's metadata only: names, without the objects' specs.
const metadataListAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

func withAccept(ctx context.Context, accept string) context.Context {
	return context.WithValue(ctx, acceptKey{}, accept)
}

func (k *kube) get(ctx context.Context, path string, out any) error {
	return k.do(ctx, http.MethodGet, path, "", nil, out)
}

func (k *kube) create(ctx context.Context, path string, obj, out any) error {
	return k.do(ctx, http.MethodPost, path, "", obj, out)
}

const jsonPatchType = "application/json-patch+json"

// delete deletes the object at path, if uid (and rv) are given only while it is that object
// (at that resourceVersion): else the apiserver answers with a conflict.
func (k *kube) delete(ctx context.Context, path string, uid, rv string) error {
	var body any
	if uid != "" {
		u := ktypes.UID(uid)
		pre := &metav1.Preconditions{UID: &u}
		if rv != "" {
			pre.ResourceVersion = &rv
		}
		body = &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, Preconditions: pre}
	}
	err := k.do(ctx, http.MethodDelete, path, "", body, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// patchOp is one JSON patch operation. Value is always sent: a test against null is how a
// patch says "this key must not exist yet" (the apiserver's JSON patch treats a missing key
// as null), as whereabouts' own patches do.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// escapePointer escapes a JSON pointer token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

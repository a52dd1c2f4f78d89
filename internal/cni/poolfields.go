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
	"net/http"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// The IPPools the plugin writes carry no managedFields. The apiserver lists every allocation
// there (one f:<offset> per entry), so a pool was half as large again and every write decoded,
// diffed and encoded both: a patch of a 1,000-entry pool took ~90 ms of the apiserver against
// ~56 ms without, and slowed every ADD it met there. An object without managedFields has no
// Update or Patch tracked by the apiserver (only a create or a server-side apply starts them
// again), so a pool is stripped once, when an answer shows it has them.

// managedFieldsKey is how a JSON answer holds managedFields. An entry's values can hold it
// too: an interface name is the tenant's (a Multus network selection names it), and
// "managedFields" is a valid one. So the key found, the answer's metadata is decoded: a
// pool recording such an interface would otherwise be sent a strip after every write, which
// the apiserver answers as a write that changes nothing, having read and patched the pool.
var managedFieldsKey = []byte(`"managedFields"`)

// stripManagedFields is the patch that empties managedFields: [{}], since an empty list leaves
// them as they are.
var stripManagedFields = []byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)

// patchPool applies ops to the IPPool name.
func (k *kube) patchPool(ctx context.Context, name string, ops []patchOp) error {
	b, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	var answer []byte
	if err := k.do(ctx, http.MethodPatch, k.wbPath("ippools", name), jsonPatchType, b, &answer); err != nil {
		return err
	}
	k.answered(answer)
	k.keepUntracked(ctx, name, answer)
	return nil
}

// createPool creates p, which a create always gives managedFields.
func (k *kube) createPool(ctx context.Context, p *wbv1.IPPool) error {
	var answer []byte
	if err := k.do(ctx, http.MethodPost, k.wbPath("ippools", ""), "", p, &answer); err != nil {
		return err
	}
	k.answered(answer)
	k.keepUntracked(ctx, p.Name, answer)
	return nil
}

// keepUntracked strips the pool's managedFields if its answer shows some. Not stripping
// costs only speed: the write has landed either way, and its caller's outcome stands.
func (k *kube) keepUntracked(ctx context.Context, name string, answer []byte) {
	if !bytes.Contains(answer, managedFieldsKey) {
		return
	}
	var shown struct {
		Metadata struct {
			ManagedFields []json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if json.Unmarshal(answer, &shown) != nil || len(shown.Metadata.ManagedFields) == 0 {
		return
	}
	_ = k.once(ctx, http.MethodPatch, k.wbPath("ippools", name), jsonPatchType, stripManagedFields, nil)
}

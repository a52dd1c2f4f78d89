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

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// RefusedForGood is refusedForGood, for the tests that show it the apiserver's own answers.
var RefusedForGood = refusedForGood

// HoldFlusherProbe holds dir's flusher lock as a DEL, GC or ADD that looks for a flusher
// holds it for an instant, until the returned func is called.
func HoldFlusherProbe(dir string) (release func(), ok bool) {
	f, alive := (&state{dir: dir}).probeFlusher()
	if alive || f == nil {
		return nil, false
	}
	return func() { _ = f.Close() }, true
}

// CreatePoolAnswer creates p with the plugin's client of kubeconfig, and says how large the
// pool the apiserver answered with was, and whether the flusher takes it for small.
func CreatePoolAnswer(kubeconfig string, p *wbv1.IPPool) (size int64, small bool, err error) {
	k, err := newKube(kubeconfig)
	if err != nil {
		return 0, false, err
	}
	k.namespace = p.Namespace
	if err := k.createPool(context.Background(), p); err != nil {
		return 0, false, err
	}
	size = k.largestAnswer.Load()
	return size, size > 0 && size < largePool, nil
}

// FlockWithin is flockWithin, and ErrLockWait its answer when the wait ran out.
var (
	FlockWithin = flockWithin
	ErrLockWait = errLockWait
)

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

package ipam_test

import (
	"context"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// faults injects errors into the writes of the suite's manager, per namespace, so that a
// test injects a fault into its own objects only.
var faults = &faultTable{create: map[string]createFault{}}

// createFault replaces one Create of the manager: it may perform it (through c) and then
// answer as it likes.
type createFault func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error

type faultTable struct {
	mu     sync.Mutex
	create map[string]createFault
}

func (f *faultTable) onCreate(namespace string, fn createFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.create[namespace] = fn
}

func (f *faultTable) createFor(namespace string) createFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.create[namespace]
}

// newClient is the manager's client (cache reads included, as controller-runtime builds it)
// behind an interceptor that consults the table.
func (f *faultTable) newClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(cfg, opts)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if fn := f.createFor(obj.GetNamespace()); fn != nil {
				return fn(ctx, c, obj, opts...)
			}
			return c.Create(ctx, obj, opts...)
		},
	}), nil
}

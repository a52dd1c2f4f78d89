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

// Package apiwarnings is the manager's handler of the apiserver's warnings: the ones
// rackwire expects on every write (ip-address-manager's finalizer names, kept so that both
// projects release what the other protected, are not domain-qualified) are logged once per
// finalizer name, which is once per kind; any other warning is logged each time.
package apiwarnings

import (
	"context"
	"regexp"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// finalizerName matches the apiextensions apiserver's warning about a finalizer name
// without a domain (or without a path) and captures the name.
var finalizerName = regexp.MustCompile(`^metadata\.finalizers(?:\[\d+\])?: "([^"]*)": prefer a domain-qualified finalizer name`)

// Handler logs the apiserver's warnings through the logger of the request's context, as
// controller-runtime's default handler does.
type Handler struct {
	mu   sync.Mutex
	seen map[string]bool
}

var _ rest.WarningHandlerWithContext = &Handler{}

// New returns a handler that has logged nothing yet.
func New() *Handler { return &Handler{seen: map[string]bool{}} }

// HandleWarningHeaderWithContext logs a warning unless it is an expected one already logged.
// The key is the finalizer name rather than the whole message: the message carries the
// index of the finalizer in the list, which differs between objects.
func (h *Handler) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, message string) {
	if code != 299 || message == "" {
		return
	}
	if m := finalizerName.FindStringSubmatch(message); m != nil {
		h.mu.Lock()
		logged := h.seen[m[1]]
		h.seen[m[1]] = true
		h.mu.Unlock()
		if logged {
			return
		}
		log.FromContext(ctx).Info(message, "repeats", "logged once per finalizer name")
		return
	}
	log.FromContext(ctx).Info(message)
}

// Install makes cfg's clients (the manager's, and those it builds from cfg) use a new
// Handler, unless cfg already has a handler of its own.
func Install(cfg *rest.Config) {
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		cfg.WarningHandlerWithContext = New()
	}
}

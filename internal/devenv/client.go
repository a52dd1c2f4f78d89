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

package devenv

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/scheme"
)

// newClient is devenv's admin client. The apiserver's warnings go to log as one line each:
// controller-runtime's default handler writes them to its global logger, which nothing in
// devenv sets, and an unset logger answers its first message with a stack trace.
func newClient(cfg *rest.Config, log io.Writer) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = warningLog{w: log}
	return client.New(cfg, client.Options{Scheme: scheme.New()})
}

// warningLog writes the apiserver's warnings (HTTP Warning headers, code 299) to w.
type warningLog struct{ w io.Writer }

func (l warningLog) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	_, _ = fmt.Fprintf(l.w, "apiserver warning: %s\n", text)
}

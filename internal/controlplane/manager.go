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

package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/rackwire/rackwire/internal/scheme"
)

// ManagerOptions are the options of an in-process manager for env: every group in its
// scheme, metrics and probes off, and the webhook server where env's webhook configurations
// send admission requests.
func ManagerOptions(env *envtest.Environment) ctrl.Options {
	o := env.WebhookInstallOptions
	return ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir,
		}),
	}
}

// Run starts mgr and returns once its webhook server answers and its cache has synced, so
// that a test's first write is admitted and seen. stop cancels the manager and waits for
// it; if it does not finish within timeout, the error carries every goroutine's stack,
// since a manager that cannot stop is a bug worth reading.
func Run(ctx context.Context, mgr ctrl.Manager, env *envtest.Environment) (stop func(timeout time.Duration) error, err error) {
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = mgr.Start(mctx)
	}()
	stop = func(timeout time.Duration) error {
		cancel()
		select {
		case <-done:
			return runErr
		case <-time.After(timeout):
			buf := make([]byte, 1<<22)
			return fmt.Errorf("manager still running %s after stop:\n%s", timeout, buf[:runtime.Stack(buf, true)])
		}
	}

	o := env.WebhookInstallOptions
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("manager stopped before its webhook server answered: %w", runErr)
		default:
		}
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // loopback server of a test
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
	if err == nil && !mgr.GetCache().WaitForCacheSync(mctx) {
		err = fmt.Errorf("manager cache did not sync")
	}
	if err != nil {
		_ = stop(30 * time.Second)
		return nil, err
	}
	return stop, nil
}

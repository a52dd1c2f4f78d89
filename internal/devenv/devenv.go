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

// Package devenv runs rackwire the way `make dev` shows it: the local control plane of
// internal/controlplane, kube-controller-manager's garbage collector and namespace controller,
// the real manager binary talking to it under its own RBAC identity with its webhooks served
// on loopback, and the samples applied. Everything it starts is recorded in its directory, so
// that a later run cleans up after one that crashed.
package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/switchlab"
)

// Options says where the environment lives and what it runs.
type Options struct {
	// Root is the repository root (config/ is read from there).
	Root string
	// Dir holds the kubeconfigs, the manager log, the process records and the control
	// plane's state; it is wiped at start.
	Dir string
	// Manager is the path of the built manager binary.
	Manager string
	// ControllerManager is the kube-controller-manager binary; by default the one in
	// KUBEBUILDER_ASSETS, where hack/envtest-bins.sh builds it.
	ControllerManager string
	// Samples applies config/samples once the manager is ready.
	Samples bool
	// SwitchLab starts the switch lab (root only) and points the sample AnsibleSwitch at it.
	SwitchLab bool
	// BMO runs the Bare Metal Operator in test mode with the BareMetalHost sample.
	BMO bool
	// ManagerArgs are added to the manager's command line (later flags win).
	ManagerArgs []string
	// Log receives progress messages.
	Log io.Writer
}

// Env is a running environment.
type Env struct {
	// Kubeconfig is an admin kubeconfig for kubectl.
	Kubeconfig string
	// ManagerLog is the file the manager writes its log to.
	ManagerLog string
	// ControllerManagerLog is kube-controller-manager's log (the garbage collector's).
	ControllerManagerLog string
	// Config is the admin REST config.
	Config *rest.Config
	// Client is an admin client knowing every rackwire group.
	Client client.Client
	// WebhookAddr is where the manager serves admission webhooks, and WebhookCA the CA
	// the apiserver trusts for it.
	WebhookAddr string
	WebhookCA   []byte
	// MetricsURL is the manager's metrics endpoint (plain HTTP on loopback).
	MetricsURL string
	// Lab is the switch lab the sample Switch drives (Options.SwitchLab), nil if not started.
	Lab *switchlab.Lab

	opts    Options
	cp      *envtest.Environment
	manager *child
	kcm     *child
	bmo     *bmoProcess
	exited  chan struct{}
	exitErr error
	procs   *processRecord
}

// Start brings the environment up. On error, whatever was started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	e := &Env{opts: opts, procs: newProcessRecord(filepath.Join(opts.Dir, "processes"))}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	if err := e.procs.killLeftovers(opts.Log); err != nil {
		return nil, err
	}
	state := filepath.Join(opts.Dir, "state")
	if err := os.RemoveAll(state); err != nil {
		return nil, fmt.Errorf("removing the previous run's state: %w", err)
	}
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			return nil, err
		}
	}

	if e.cp, err = controlplane.New(opts.Root); err != nil {
		return nil, err
	}
	// State under Dir rather than in fresh temporary directories, so that the wipe above
	// also removes what a crashed run left.
	e.cp.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(state, "etcd")}
	e.cp.ControlPlane.APIServer = &envtest.APIServer{CertDir: filepath.Join(state, "apiserver")}
	fmt.Fprintln(opts.Log, "starting etcd and kube-apiserver on loopback")
	if e.Config, err = e.cp.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	if err := controlplane.InstallPolicies(ctx, e.Config, opts.Root); err != nil {
		return nil, fmt.Errorf("installing the admission policies: %w", err)
	}
	if err := e.procs.recordChildren(); err != nil {
		return nil, err
	}
	if e.Client, err = newClient(e.Config, opts.Log); err != nil {
		return nil, err
	}

	e.Kubeconfig = filepath.Join(opts.Dir, "kubeconfig")
	if err := e.WriteKubeconfig(e.Kubeconfig, envtest.User{Name: "dev-admin", Groups: []string{"system:masters"}}); err != nil {
		return nil, err
	}

	// The garbage collector, as in a cluster: owner references are how rackwire's objects
	// (a VM's IPAMClaims) go.
	if err := e.startControllerManager(ctx); err != nil {
		return nil, err
	}
	if err := e.startManager(ctx); err != nil {
		return nil, err
	}
	e.watchChildren()

	if opts.SwitchLab {
		e.startLab()
	}
	if opts.Samples {
		n, err := applyFile(ctx, e.Client, filepath.Join(opts.Root, controlplane.SamplesDir), "default", e.pointAtLab)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.Log, "applied %d sample objects to namespace default\n", n)
		if opts.BMO {
			if err := e.startBMO("default"); err != nil {
				return nil, err
			}
			if _, err := applyFile(ctx, e.Client, filepath.Join(opts.Root, bmoSamples), "default"); err != nil {
				return nil, err
			}
		}
		if err := e.linkSamples(ctx, "default"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Done is closed when the manager or kube-controller-manager exits on its own; Err then
// says which and why.
func (e *Env) Done() <-chan struct{} { return e.exited }

// Err says which child exited and how, once Done is closed.
func (e *Env) Err() error { return e.exitErr }

// watchChildren closes exited when the first child ends: `make dev` without its garbage
// collector would quietly behave unlike a cluster.
func (e *Env) watchChildren() {
	e.exited = make(chan struct{})
	go func() {
		var c *child
		select {
		case <-e.manager.done:
			c = e.manager
		case <-e.kcm.done:
			c = e.kcm
		}
		e.exitErr = fmt.Errorf("%s exited: %v", c.name, c.err)
		close(e.exited)
	}()
}

// Stop stops the manager and kube-controller-manager, then the control plane, and forgets
// the processes.
func (e *Env) Stop() error {
	var errs []error
	if e.bmo != nil {
		errs = append(errs, e.bmo.stop())
	}
	for _, c := range []*child{e.manager, e.kcm} {
		if c != nil {
			errs = append(errs, c.stop(10*time.Second))
		}
	}
	if e.cp != nil && e.cp.ControlPlane.APIServer != nil {
		errs = append(errs, e.cp.Stop())
	}
	if e.Lab != nil {
		errs = append(errs, e.Lab.Stop())
	}
	errs = append(errs, e.procs.forget())
	return errors.Join(errs...)
}

// WriteKubeconfig writes a kubeconfig for a user of the control plane (its name and groups
// are what RBAC sees).
func (e *Env) WriteKubeconfig(path string, u envtest.User) error {
	user, err := e.cp.AddUser(u, nil)
	if err != nil {
		return fmt.Errorf("adding user %s: %w", u.Name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

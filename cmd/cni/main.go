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

// Command rackwire is the CNI IPAM plugin (ipam type "rackwire"; see internal/cni). Run as
// `rackwire install` it is the DaemonSet's installer instead, and `rackwire flush <dir>` is the
// node's pool writer that ADDs start behind them.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/rackwire/rackwire/internal/cni"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "install" {
		if err := install(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "rackwire install:", err)
			os.Exit(1)
		}
		return
	}
	// The roots the plugin's install wrote beside it; never anything a configuration says.
	if self, err := os.Executable(); err == nil {
		if err := cni.LoadRoots(self); err != nil {
			fmt.Fprintln(os.Stderr, "rackwire:", err)
			os.Exit(1)
		}
	}
	if len(os.Args) > 2 && os.Args[1] == "flush" {
		if err := cni.RunFlusher(os.Args[2], len(os.Args) > 3 && os.Args[3] == cni.LockedFlag); err != nil {
			fmt.Fprintln(os.Stderr, "rackwire flush:", err)
			os.Exit(1)
		}
		return
	}
	// A verb is one process doing one thing at a time; with a P for each core the runtime
	// starts threads that wake and park around its few goroutines, which a node pays for in
	// a burst of pods (8% of the plugin's CPU in the benchmark's 10 x 16 ADDs and DELs).
	// The flusher, which lives on, keeps the default.
	runtime.GOMAXPROCS(1)
	if self, err := os.Executable(); err == nil {
		cni.FlushCommand = self
	}
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add: cni.Logged("ADD", cni.Add), Del: cni.Logged("DEL", cni.Del), Check: cni.Logged("CHECK", cni.Check),
		GC: cni.Logged("GC", cni.GC), Status: cni.Logged("STATUS", cni.Status),
	}, version.PluginSupports("0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"), "rackwire IPAM")
}

func install(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	in := cni.Install{Self: self}
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.StringVar(&in.BinDir, "cni-bin-dir", "/host/opt/cni/bin", "the node's CNI bin directory, as mounted")
	fs.StringVar(&in.ConfDir, "cni-conf-dir", "/host/etc/cni/net.d", "the node's CNI configuration directory, as mounted")
	fs.StringVar(&in.HostConfDir, "host-cni-conf-dir", "/etc/cni/net.d", "the node's CNI configuration directory on the node")
	fs.StringVar(&in.HostStateDir, "host-state-dir", cni.StateRoot, "the only directory a configuration's state_dir may name (itself, not one below it), on the node")
	fs.StringVar(&in.HostLogDir, "host-log-dir", cni.LogRoot, "the only directory a configuration's log_file may lie in, on the node")
	fs.StringVar(&in.TokenFile, "token-file", sa+"token", "the service-account token")
	fs.StringVar(&in.CAFile, "ca-file", sa+"ca.crt", "the apiserver's CA")
	fs.StringVar(&in.Server, "server", "", "the apiserver as the node reaches it (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	fs.StringVar(&in.Namespace, "namespace", "kube-system", "where the plugin keeps IPPools and reservations (the manager's --nodeslice-namespace)")
	fs.StringVar(&in.Node, "node", os.Getenv("NODENAME"), "the node's name")
	fs.DurationVar(&in.Every, "refresh", time.Minute, "how often the token is looked at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if in.Server == "" {
		in.Server = "https://" + net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	}
	if in.Node == "" {
		return fmt.Errorf("--node (or NODENAME) is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return in.Run(ctx)
}

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

// Command manager is the rackwire operator: every reconciler and admission webhook in one
// binary. This file holds flags and manager wiring only; parts are added in areas.go.
package main

import (
	"crypto/tls"
	"flag"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rackwire/rackwire/internal/apiwarnings"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/scheme"
)

type options struct {
	metricsAddr    string
	secureMetrics  bool
	probeAddr      string
	pprofAddr      string
	leaderElect    bool
	leaderElectNS  string
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
	webhooks       bool
	webhookHost    string
	webhookPort    int
	webhookCertDir string
	enableHTTP2    bool
	qps            float64
	burst          int
	// secretNamespaces is --switch-secret-namespaces as given.
	secretNamespaces string
	serve            string
	zap              zap.Options
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443",
		"Address of the metrics endpoint (:8443 for HTTPS, :8080 for HTTP); 0 disables it.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorized by the apiserver.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"Address of the Go pprof endpoints (/debug/pprof/); empty disables them.")
	// On by default: two replicas reconciling at once (a rollout, a second deployment)
	// would both allocate.
	flag.BoolVar(&o.leaderElect, "leader-elect", true,
		"Elect a leader, so that only one replica reconciles at a time (outside a pod, also give --leader-election-namespace).")
	flag.StringVar(&o.leaderElectNS, "leader-election-namespace", "",
		"Namespace of the leader election lease; defaults to the pod's namespace.")
	flag.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long a replica waits after the leader's last renewal before it takes over.")
	flag.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps trying to renew before it gives up leadership and exits.")
	flag.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to acquire or renew the lease.")
	flag.BoolVar(&o.webhooks, "webhooks", true,
		"Serve the admission webhooks; turn off when running against a cluster without their certificates.")
	flag.StringVar(&o.webhookHost, "webhook-host", "", "Address the webhook server binds to; empty for all.")
	flag.StringVar(&o.serve, "serve", strings.Join(areaNames(), ","),
		"Comma list of the areas to serve, of "+strings.Join(areaNames(), ", ")+"; an entry may also read area=true or area=false. "+
			"An area not listed runs none of its reconcilers and webhooks, and its CRDs need not be installed.")
	flag.IntVar(&o.webhookPort, "webhook-port", webhook.DefaultPort, "Port of the webhook server.")
	flag.StringVar(&o.webhookCertDir, "webhook-cert-dir", "",
		"Directory with the webhook serving certificate tls.crt and tls.key; it is watched for rotation.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics and webhook servers (off because of the HTTP/2 stream-reset CVEs).")
	// Every claim costs three writes (finalizer, IPAddress, status); at 50 QPS a burst of
	// claims waited on the client's rate limiter (test/bench measured a third of what the
	// apiserver takes). The apiserver's priority and fairness protects it; the client's
	// limit is only a safety net against a hot loop. controller-runtime gives each resource
	// type its own limiter of this size.
	flag.Float64Var(&o.qps, "kube-api-qps", 500, "Queries per second the manager may send to the apiserver, per resource type.")
	flag.IntVar(&o.burst, "kube-api-burst", 1000, "Burst of queries the manager may send to the apiserver, per resource type.")
	flag.IntVar(&ipam.ClaimWorkers, "ipam-claim-workers", ipam.ClaimWorkers,
		"IPClaims and IPAddressClaims reconciled at once, per kind.")
	flag.DurationVar(&ipam.PoolStatusInterval, "ipam-pool-status-interval", ipam.PoolStatusInterval,
		"How long a pool's addresses must stay unchanged before its status is rebuilt and written, and the least time "+
			"between two writes; while they keep changing, a pool with n allocations is written every n/500 seconds.")
	flag.StringVar(&switches.Ansible.Playbook, "ansible-playbook", "ansible-playbook", "The ansible-playbook binary that drives switches.")
	flag.StringVar(&switches.Ansible.RolesPath, "ansible-roles-path", "/etc/ansible/roles", "Where the network-runner role is installed.")
	flag.StringVar(&switches.Ansible.WorkDir, "ansible-work-dir", "",
		"Parent of the private per-run directories (inventory with credentials, 0600); empty for the system's temporary directory.")
	flag.DurationVar(&switches.Ansible.ConnectTimeout, "switch-connect-timeout", 10*time.Second, "How long Ansible waits for a switch's SSH login.")
	flag.DurationVar(&switches.RunTimeout, "switch-run-timeout", switches.RunTimeout,
		"Limit of one playbook run on a switch, plus --switch-run-timeout-per-port for each port in it; a run past it is killed with its whole process group.")
	flag.DurationVar(&switches.RunTimeoutPerPort, "switch-run-timeout-per-port", switches.RunTimeoutPerPort, "What each port of a batched run adds to its limit.")
	flag.DurationVar(&switches.DriftInterval, "switch-drift-interval", switches.DriftInterval, "How often Active ports are read back to detect drift.")
	flag.IntVar(&switches.Ansible.MaxProcesses, "switch-max-playbooks", 8,
		"How many ansible-playbook processes may run at once, across every switch (each costs tens of MB): "+
			"size it to the pod's memory limit. A run waits for a slot within its own time limit.")
	flag.StringVar(&o.secretNamespaces, "switch-secret-namespaces", "",
		"Comma-separated namespaces whose Secrets hold switch credentials; the manager reads Secrets nowhere else, and "+
			"each needs config/switch-secrets applied in it. Empty: the manager's own namespace. \"*\": every namespace "+
			"(only where Secrets are granted cluster-wide).")
	flag.StringVar(&nodeslice.Namespace, "nodeslice-namespace", nodeslice.Namespace,
		"Namespace of the NodeSlicePools and whereabouts IPPools: that of the CNI binaries' kubeconfig context (whereabouts' default is kube-system).")
	flag.DurationVar(&nodeslice.ReleaseGrace, "nodeslice-release-grace", nodeslice.ReleaseGrace,
		"How long a slice a node lost (Node deleted, range re-cut) is kept from other nodes, so that a CNI ADD that read the old slice finishes first.")
	flag.DurationVar(&nodeslice.WriteInterval, "nodeslice-write-interval", nodeslice.WriteInterval,
		"Longest a joining Node waits for its NodeSlicePool write while Nodes keep joining; a burst of joins is gathered into few writes.")
	flag.DurationVar(&nodeslice.WriteQuiet, "nodeslice-write-quiet", nodeslice.WriteQuiet,
		"How long Nodes must be quiet for a NodeSlicePool to be written at once (a lone Node, the end of a burst).")
	flag.DurationVar(&ipreconciler.Grace, "ip-reconciler-grace", ipreconciler.Grace,
		"How long the holder of an address in whereabouts' IPPools and reservations (a pod, its Node) must have been seen gone "+
			"before its records are reaped, on networks with ipam.type rackwire.")
	flag.DurationVar(&ipreconciler.Resync, "ip-reconciler-resync", ipreconciler.Resync,
		"How often the IP reconciler looks at a network without an event (records of ADDs cut short leave none).")
	flag.BoolVar(&ipreconciler.TrustNetworkStatus, "ip-reconciler-trust-network-status", ipreconciler.TrustNetworkStatus,
		"Let a pod's k8s.v1.cni.cncf.io/network-status annotation tell, on networks without reservations "+
			"(enable_overlapping_ranges: false), an earlier pod's entry from the live one's, and reap the earlier. Only with "+
			"config/cni/network-status-policy applied: anyone who may update a pod can otherwise write it and get a live "+
			"address handed to a second pod. Off, such entries leak until their pod goes.")
	o.zap.Development = false
	o.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	log := ctrl.Log.WithName("setup")

	if err := run(o); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	// Before anything else: a misspelt area must stop the manager, not leave an area unserved.
	serve, err := parseServe(o.serve, areaNames())
	if err != nil {
		return err
	}

	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metrics := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if o.secureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	switches.SecretNamespaces = secretNamespaces(o.secretNamespaces)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	// The apiserver warns on every write of a claim or address that carries one of
	// ip-address-manager's finalizer names: logged per write, that was nearly all of the log.
	apiwarnings.Install(cfg)

	// The IP reconciler caches Pods trimmed to their identity, Node and phase: any other
	// reader of Pods through the manager's client sees them so.
	var cacheOpts cache.Options
	ipreconciler.CacheOptions(&cacheOpts)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme.New(),
		Cache:  cacheOpts,
		// Secrets are read one by one where granted (switches.SecretNamespaces), never
		// cached: an informer would need list and watch, which the manager is not given.
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics:                       metrics,
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "rackwire.metal3.io",
		LeaderElectionNamespace:       o.leaderElectNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    o.webhookHost,
			Port:    o.webhookPort,
			CertDir: o.webhookCertDir,
			TLSOpts: tlsOpts,
		}),
	})
	if err != nil {
		return err
	}

	if err := setupAreas(mgr, o.webhooks, serve); err != nil {
		return err
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	ready := healthz.Ping
	if o.webhooks {
		// Not ready until the webhook server listens, so that no admission request of the
		// apiserver lands on a replica that cannot answer it.
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		return err
	}

	var served []string
	for _, name := range areaNames() {
		if serve[name] {
			served = append(served, name)
		}
	}
	ctrl.Log.WithName("setup").Info("starting manager", "areas", served, "webhooks", o.webhooks)
	return mgr.Start(ctrl.SetupSignalHandler())
}

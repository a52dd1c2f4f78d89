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

package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

// The churn and mixed-network specs run the IPAM binaries directly, as a meta plugin
// delegates to them (no network namespace: IPAM never enters one), for pods that exist as
// API objects so that the reapers (rackwire's and whereabouts') see them come and go.

// ipamBin is one IPAM binary with the network configuration it is handed.
type ipamBin struct {
	bin  string
	conf []byte
}

// attachment is one pod's interface on a network; the pod's name is never reused, so its
// podref names the holder.
type attachment struct {
	pod, uid, node string
}

func (a attachment) containerID() string { return "churn-" + a.pod }
func (a attachment) podRef() string      { return "default/" + a.pod }

// run runs verb for a; stdout is the CNI result.
func (b ipamBin) run(verb string, a attachment) (string, error) {
	cmd := exec.Command(b.bin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+a.containerID(),
		"CNI_NETNS=/var/run/netns/"+a.pod, "CNI_IFNAME=net1", "CNI_PATH="+filepath.Dir(b.bin), "NODENAME="+a.node,
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME="+a.pod+";K8S_POD_UID="+a.uid)
	cmd.Stdin = bytes.NewReader(b.conf)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s for %s on %s: %w: %s %s", filepath.Base(b.bin), verb, a.pod, a.node, err, out.String(), errOut.String())
	}
	return out.String(), nil
}

// add returns the IPv4 address ADD answered.
func (b ipamBin) add(a attachment) (net.IP, error) {
	out, err := b.run("ADD", a)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.IPs) != 1 {
		return nil, fmt.Errorf("ADD for %s answered %q (%v)", a.pod, out, err)
	}
	ip, _, err := net.ParseCIDR(r.IPs[0].Address)
	return ip.To4(), err
}

// createPod creates a's pod on its node, with the network-status annotation Multus writes,
// which is what whereabouts' ip-control-loop reads when the pod is deleted.
func createPod(ctx context.Context, c client.Client, a *attachment, nad string) error {
	status := fmt.Sprintf(`[{"name":"default/%s","interface":"net1","default":false}]`, nad)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: a.pod,
		Annotations: map[string]string{nadv1.NetworkStatusAnnot: status, nadv1.NetworkAttachmentAnnot: nad}},
		Spec: corev1.PodSpec{NodeName: a.node, Containers: []corev1.Container{{Name: "c", Image: "none"}}}}
	if err := c.Create(ctx, pod); err != nil {
		return err
	}
	a.uid = string(pod.UID)
	return nil
}

// deletePod deletes the pod at once, as the kubelet confirms a deletion: no kubelet runs here.
func deletePod(ctx context.Context, c client.Client, a attachment) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: a.pod}}
	return client.IgnoreNotFound(c.Delete(ctx, pod, client.GracePeriodSeconds(0)))
}

// ledger records which pods an ADD answered with an address and which still hold it.
// A pod holds its address from ADD's answer until its DEL was sent or the pod is gone
// (a pod deleted without DEL holds it until a reaper frees it: it is not counted as
// holding then, since freeing it is right).
type ledger struct {
	mu       sync.Mutex
	holding  map[string]string // IP -> pod
	answered map[string]string // pod -> IP, every pod ADD ever answered
	twice    []string
}

func newLedger() *ledger {
	return &ledger{holding: map[string]string{}, answered: map[string]string{}}
}

// got records an ADD's answer; an address another pod still holds is a failure.
func (l *ledger) got(pod string, ip net.IP) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if other, ok := l.holding[ip.String()]; ok && other != pod {
		l.twice = append(l.twice, fmt.Sprintf("%s answered to %s while %s holds it", ip, pod, other))
	}
	l.holding[ip.String()] = pod
	l.answered[pod] = ip.String()
}

// released marks pod's address free, before its DEL is sent or its pod deleted.
func (l *ledger) released(pod string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ip, ok := l.answered[pod]; ok && l.holding[ip] == pod {
		delete(l.holding, ip)
	}
}

func (l *ledger) failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.twice...)
}

// record is one pool entry or reservation: who it says holds an address.
type record struct {
	kind, object, podRef, containerID string
}

// snapshot reads every IPPool and reservation of ns at one resourceVersion (the pools' list
// gives it, the reservations are read exactly at it), so the two lists never straddle a
// change, and returns the records by IPv4 address.
func snapshot(ctx context.Context, c client.Client, ns, network string) (map[string][]record, error) {
	pools := &nodeslicev1alpha1.IPPoolList{}
	if err := c.List(ctx, pools, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	reservations := &nodeslicev1alpha1.OverlappingRangeIPReservationList{}
	if err := c.List(ctx, reservations, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{
		ResourceVersion: pools.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}}); err != nil {
		return nil, err
	}
	byIP := map[string][]record{}
	for _, p := range pools.Items {
		_, cidr, err := net.ParseCIDR(p.Spec.Range)
		if err != nil || cidr.IP.To4() == nil {
			continue
		}
		base := binary.BigEndian.Uint32(cidr.IP.To4())
		for off, a := range p.Spec.Allocations {
			n, err := strconv.ParseUint(off, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("IPPool %s: offset %q: %w", p.Name, off, err)
			}
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, base+uint32(n))
			byIP[ip.String()] = append(byIP[ip.String()], record{kind: "IPPool", object: p.Name, podRef: a.PodRef, containerID: a.ContainerID})
		}
	}
	for _, r := range reservations.Items {
		ip, ok := strings.CutPrefix(r.Name, network+"-")
		if !ok || net.ParseIP(ip) == nil {
			continue
		}
		byIP[ip] = append(byIP[ip], record{kind: "OverlappingRangeIPReservation", object: r.Name, podRef: r.Spec.PodRef, containerID: r.Spec.ContainerID})
	}
	return byIP, nil
}

// twoHolders lists the addresses whose records name two different pods that were each
// answered that address by an ADD: records of an ADD that failed are no holder.
func twoHolders(byIP map[string][]record, l *ledger) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for ip, recs := range byIP {
		holders := map[string]bool{}
		for _, r := range recs {
			pod := strings.TrimPrefix(r.podRef, "default/")
			if l.answered[pod] == ip {
				holders[pod] = true
			}
		}
		if len(holders) > 1 {
			bad = append(bad, fmt.Sprintf("%s: %+v", ip, recs))
		}
	}
	sort.Strings(bad)
	return bad
}

// orphans lists the records whose pod is not a live pod on a live Node.
func orphans(ctx context.Context, c client.Client, byIP map[string][]record) ([]string, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return nil, err
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return nil, err
	}
	liveNode := map[string]bool{}
	for _, n := range nodes.Items {
		liveNode[n.Name] = true
	}
	live := map[string]bool{}
	for _, p := range pods.Items {
		if liveNode[p.Spec.NodeName] {
			live[p.Namespace+"/"+p.Name] = true
		}
	}
	var bad []string
	for ip, recs := range byIP {
		for _, r := range recs {
			if !live[r.podRef] {
				bad = append(bad, fmt.Sprintf("%s %s %s for %s", ip, r.kind, r.object, r.podRef))
			}
		}
	}
	sort.Strings(bad)
	return bad, nil
}

// controlLoop runs whereabouts' ip-control-loop for node, as its DaemonSet does (in-cluster
// configuration, WHEREABOUTS_NAMESPACE), until the spec ends, with the token of the service
// account allowWhereaboutsControlLoop makes; the service-account directory is a tmpfs over
// /run in a mount namespace of its own, so the host's /run is untouched.
func controlLoop(ctx context.Context, env *devenv.Env, bins, dir, node, ns string) {
	u, err := url.Parse(env.Config.Host)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ca, token := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "whereabouts.token")
	ExpectWithOffset(1, os.WriteFile(ca, env.Config.CAData, 0o600)).To(Succeed())
	kube, err := kubernetes.NewForConfig(env.Config)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	tr, err := kube.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "whereabouts-e2e",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, os.WriteFile(token, []byte(tr.Status.Token), 0o600)).To(Succeed())
	logPath := filepath.Join(dir, "ip-control-loop-"+node+".log")
	logFile, err := os.Create(logPath)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	const sa = "/run/secrets/kubernetes.io/serviceaccount"
	script := `mount -t tmpfs tmpfs /run && mkdir -p ` + sa + ` && cp "$1" ` + sa + `/ca.crt && cp "$2" ` + sa + `/token && exec "$3" -log-level debug`
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", ca, token,
		filepath.Join(bins, "ip-control-loop"))
	cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(),
		"NODENAME="+node, "WHEREABOUTS_NAMESPACE="+ns)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	ExpectWithOffset(1, cmd.Start()).To(Succeed())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = logFile.Close()
	})
	// It is up once its informers have synced; a crash shows in its log.
	EventuallyWithOffset(1, func() (string, error) {
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			return "", errors.New("ip-control-loop exited: " + string(b))
		default:
		}
		b, err := os.ReadFile(logPath)
		return string(b), err
	}, 30*time.Second, 200*time.Millisecond).Should(ContainSubstring("Informer factories started"))
}

// allowWhereaboutsControlLoop makes the service account kube-system/whereabouts-e2e with
// what whereabouts' DaemonSet's ClusterRole grants, for controlLoop.
func allowWhereaboutsControlLoop(ctx context.Context, c client.Client) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "whereabouts-e2e"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"whereabouts.cni.cncf.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{"k8s.cni.cncf.io"}, Resources: []string{"network-attachment-definitions"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	}}
	if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		Fail(err.Error())
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "whereabouts-e2e"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "whereabouts-e2e"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "whereabouts-e2e", Namespace: "kube-system"}}}
	if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		Fail(err.Error())
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "whereabouts-e2e"}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		Fail(err.Error())
	}
}

// churn drives pods through ADD and random release on their nodes, one worker per node,
// and samples the pools and reservations while it runs.
type churn struct {
	c      client.Client
	ns     string // the pools' namespace
	prefix string // the reservations' name prefix: the network's network_name
	nodes  []string
	pods   int // in all, spread over the nodes
	// plugin picks the binary and NAD of the i-th pod.
	plugin func(i int) (ipamBin, string)
	// keep is the number of pods a node keeps attached once it has finished.
	keep int
	// killNode, if set, is deleted (its pods deleted, no DEL sent) once half the pods ran.
	killNode string

	ledger                                 *ledger
	adds, addFailures, dels, skipped, gone int
	samples                                int
	sampleFailures                         []string
	mu                                     sync.Mutex
}

// run returns the pods still attached (on live nodes) at the end.
func (ch *churn) run(ctx context.Context, seed int64) []attachment {
	ch.ledger = newLedger()
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			byIP, err := snapshot(ctx, ch.c, ch.ns, ch.prefix)
			if err != nil {
				continue // a read that failed samples nothing
			}
			bad := twoHolders(byIP, ch.ledger)
			ch.mu.Lock()
			ch.samples++
			ch.sampleFailures = append(ch.sampleFailures, bad...)
			ch.mu.Unlock()
		}
	}()

	var (
		wg       sync.WaitGroup
		started  sync.WaitGroup
		half     = make(chan struct{})
		halfOnce sync.Once
		ran      int
		leftMu   sync.Mutex
		left     []attachment
	)
	killed := make(chan struct{})
	perNode := ch.pods / len(ch.nodes)
	for n, node := range ch.nodes {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			rng := newRand(seed + int64(n))
			var live []attachment
			bins := map[string]ipamBin{}
			release := func(k int) {
				a := live[k]
				live = append(live[:k], live[k+1:]...)
				ch.ledger.released(a.pod)
				// One DEL in ten never comes: the pod just goes.
				if rng.IntN(10) == 0 {
					ch.count(&ch.skipped)
				} else {
					_, err := bins[a.pod].run("DEL", a)
					Expect(err).NotTo(HaveOccurred())
					ch.count(&ch.dels)
				}
				Expect(deletePod(ctx, ch.c, a)).To(Succeed())
				delete(bins, a.pod)
			}
			started.Done()
			for i := range perNode {
				if node == ch.killNode {
					select {
					case <-killed:
						return
					default:
					}
				}
				bin, nad := ch.plugin(n*perNode + i)
				a := attachment{pod: fmt.Sprintf("%s-%s-w%d-p%d", ch.prefix, node, n, i), node: node}
				Expect(createPod(ctx, ch.c, &a, nad)).To(Succeed())
				ip, err := bin.add(a)
				ch.count(&ch.adds)
				if err != nil {
					// The runtime's answer to a failed ADD: DEL, then the pod goes.
					ch.count(&ch.addFailures)
					GinkgoWriter.Println(err)
					_, derr := bin.run("DEL", a)
					Expect(derr).NotTo(HaveOccurred())
					Expect(deletePod(ctx, ch.c, a)).To(Succeed())
				} else {
					ch.ledger.got(a.pod, ip)
					live = append(live, a)
					bins[a.pod] = bin
				}
				// Release about as often as ADD once a node holds a few pods.
				for len(live) > 4 && rng.IntN(100) < 45+len(live) {
					release(rng.IntN(len(live)))
				}
				ch.mu.Lock()
				ran++
				if ran >= ch.pods/2 {
					halfOnce.Do(func() { close(half) })
				}
				ch.mu.Unlock()
			}
			for len(live) > ch.keep {
				release(rng.IntN(len(live)))
			}
			leftMu.Lock()
			if node != ch.killNode {
				left = append(left, live...)
			} else {
				for _, a := range live {
					ch.ledger.released(a.pod)
				}
			}
			leftMu.Unlock()
		}()
	}
	if ch.killNode != "" {
		<-half
		close(killed)
		// The node goes with its pods; no DEL comes for them. Its worker stops at its next
		// pod, whose ADD may still be running against the node.
		pods := &corev1.PodList{}
		Expect(ch.c.List(ctx, pods, client.InNamespace("default"))).To(Succeed())
		for _, p := range pods.Items {
			if p.Spec.NodeName == ch.killNode {
				ch.ledger.released(p.Name)
				Expect(deletePod(ctx, ch.c, attachment{pod: p.Name})).To(Succeed())
				ch.count(&ch.gone)
			}
		}
		Expect(ch.c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ch.killNode}})).To(Succeed())
	}
	wg.Wait()
	close(stop)
	<-sampled
	if ch.killNode != "" {
		// Pods the node's worker made after the sweep above go too.
		pods := &corev1.PodList{}
		Expect(ch.c.List(ctx, pods, client.InNamespace("default"))).To(Succeed())
		for _, p := range pods.Items {
			if p.Spec.NodeName == ch.killNode {
				ch.ledger.released(p.Name)
				Expect(deletePod(ctx, ch.c, attachment{pod: p.Name})).To(Succeed())
				ch.count(&ch.gone)
			}
		}
	}
	return left
}

func (ch *churn) count(n *int) {
	ch.mu.Lock()
	*n++
	ch.mu.Unlock()
}

func (ch *churn) String() string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return fmt.Sprintf("%d ADDs (%d failed), %d DELs, %d pods gone without DEL, %d with their node; %d samples",
		ch.adds, ch.addFailures, ch.dels, ch.skipped, ch.gone, ch.samples)
}

// settled checks, once the reapers' grace has passed, that every record has a live holder
// and every pod still attached has its pool entry and reservation (put back if someone
// deleted it).
func settled(ctx context.Context, c client.Client, ns, prefix string, left []attachment, within time.Duration) {
	EventuallyWithOffset(1, func(g Gomega) {
		byIP, err := snapshot(ctx, c, ns, prefix)
		g.Expect(err).NotTo(HaveOccurred())
		bad, err := orphans(ctx, c, byIP)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bad).To(BeEmpty(), "pool entries or reservations without a live holder")
		held := map[string]map[string]bool{}
		for _, recs := range byIP {
			for _, r := range recs {
				if held[r.podRef] == nil {
					held[r.podRef] = map[string]bool{}
				}
				held[r.podRef][r.kind] = true
			}
		}
		var missing []string
		for _, a := range left {
			if !held[a.podRef()]["IPPool"] || !held[a.podRef()]["OverlappingRangeIPReservation"] {
				missing = append(missing, fmt.Sprintf("%s: %v", a.pod, held[a.podRef()]))
			}
		}
		g.Expect(missing).To(BeEmpty(), "attached pods without their pool entry or reservation")
	}, within, time.Second).Should(Succeed())
}

// newRand is a seeded source: a failing run can be repeated with its seed.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0)) } //nolint:gosec // test data, not secrets

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

package hostlink

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Finalizer keeps a deleted host until its ports are clean (the seed's story 5), and a deleted
// HostLink until the ports it recorded are released.
const Finalizer = "rackwire.metal3.io/host-ports"

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=hostlinks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=metal3.io,resources=hostlinks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=switchports,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=hostnetworkattachments,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=switchportconfigurations,verbs=get;list;watch;create

// Reconciler links one BareMetalHost's state to its SwitchPorts.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Recheck is how often a held host is looked at again, besides the watches.
	Recheck time.Duration
}

// view is everything one reconcile learned about a host, from which the writes follow.
type view struct {
	host     *metal3v1alpha1.BareMetalHost
	link     *networkv1alpha1.HostLink
	network  networkv1alpha1.HostNetwork
	tenant   *tenant
	found    *found
	ports    []networkv1alpha1.HostPortStatus
	problems []string
	failed   []string // "SwitchPort ns/name: why"
	taken    []string // "SwitchPort ns/name is held by host ns/name"
	contests []contest
	ready    int
	// unclean are the ports of a deleted host that were unlinked and tried once but are not
	// confirmed clean; untried counts those not tried yet.
	unclean  []networkv1alpha1.UnknownPort
	untried  int
	released bool // the release annotation let a deleted host go
	// frozen says why the consumer is paused (clusterctl move): no hold is taken or lifted.
	frozen string
}

// contest is a port this host newly found held by another host.
type contest struct {
	port  client.ObjectKey
	other *networkv1alpha1.HostLink
}

// Reconcile follows the finalizer-then-return pattern on the host and writes the HostLink's
// status in one patch at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	link := &networkv1alpha1.HostLink{}
	if err := r.Get(ctx, req.NamespacedName, link); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		link = nil
	}
	if link != nil && !link.DeletionTimestamp.IsZero() {
		// The record of what the host's ports were given goes: they are released first.
		return ctrl.Result{}, r.forget(ctx, link)
	}
	host := &metal3v1alpha1.BareMetalHost{}
	if err := r.Get(ctx, req.NamespacedName, host); err != nil {
		if apierrors.IsNotFound(err) && link != nil {
			return ctrl.Result{}, r.hostGone(ctx, link)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if link != nil && ownedByAnother(link, host) {
		// The HostLink rackwire made for a previous host of this name, which the garbage
		// collector deletes, releasing what it recorded: this host's ports too, were they
		// driven through it. It goes now; this host gets its own.
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, link, client.Preconditions{UID: &link.UID}))
	}
	if link != nil && !controllerutil.ContainsFinalizer(link, Finalizer) {
		base := link.DeepCopy()
		controllerutil.AddFinalizer(link, Finalizer)
		return ctrl.Result{}, r.Patch(ctx, link, client.MergeFrom(base))
	}
	f, err := wiring(ctx, r, host, link)
	if err != nil {
		return ctrl.Result{}, err
	}
	ours := controllerutil.ContainsFinalizer(host, Finalizer)
	if len(f.wires) == 0 && !linksAny(link) {
		// Nothing is cabled as far as anyone vouches: nothing to hold or clean. Wiring seen
		// but not used still gets a HostLink, to be reported. A port taken just before a
		// crash names the HostLink though its status does not: it is released all the same.
		if link != nil {
			if err := r.release(ctx, link, nil); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.letGoUnlessMoving(ctx, host); err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case link != nil:
			v := &view{host: host, link: link, network: NetworkOf(host), problems: f.problems, found: f}
			return ctrl.Result{}, r.writeStatus(ctx, v)
		case len(f.unused) > 0 && host.DeletionTimestamp.IsZero():
			return ctrl.Result{}, r.createLink(ctx, host)
		}
		return ctrl.Result{}, nil
	}
	if host.DeletionTimestamp.IsZero() && (!ours || host.Labels[networkv1alpha1.LabelWired] != "true") {
		// The label puts the host under the webhook that fails closed.
		base := host.DeepCopy()
		controllerutil.AddFinalizer(host, Finalizer)
		if host.Labels == nil {
			host.Labels = map[string]string{}
		}
		host.Labels[networkv1alpha1.LabelWired] = "true"
		return ctrl.Result{}, r.Patch(ctx, host, client.MergeFrom(base))
	}
	if link == nil {
		if !host.DeletionTimestamp.IsZero() {
			// The HostLink went first: what it drove was released when it went, nothing of
			// this host's is left to clean, and a terminating namespace refuses a new one.
			return ctrl.Result{}, r.letGoUnlessMoving(ctx, host)
		}
		return ctrl.Result{}, r.createLink(ctx, host)
	}

	v := &view{host: host, link: link, network: NetworkOf(host), problems: f.problems, found: f}
	if v.network == networkv1alpha1.NetworkTenant {
		t, problem, err := consumerOf(ctx, r, host, nicNames(host))
		if err != nil {
			return ctrl.Result{}, err
		}
		v.tenant = t
		if problem != "" {
			v.problems = append(v.problems, problem)
		}
	}
	if v.frozen, err = consumerPaused(ctx, r, host); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.release(ctx, link, f.wires); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range f.wires {
		if err := r.drive(ctx, v, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.hold(ctx, v); err != nil {
		return ctrl.Result{}, err
	}
	if !host.DeletionTimestamp.IsZero() && v.network == networkv1alpha1.NetworkClean && ours {
		if err := r.finish(ctx, v); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.writeStatus(ctx, v); err != nil {
		return ctrl.Result{}, err
	}
	if v.ready < len(v.ports) && r.Recheck > 0 {
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	return ctrl.Result{}, nil
}

// finish lets a deleted host go once its ports are clean, or, with the release annotation,
// once every port that is not was unlinked and tried once: those are recorded as unknown,
// and their SwitchPorts clean them when the switch answers again.
func (r *Reconciler) finish(ctx context.Context, v *view) error {
	host, link := v.host, v.link
	clean := v.ready == len(v.ports)
	if !clean && (link.Annotations[networkv1alpha1.AnnotationReleaseHost] != "true" || v.untried > 0) {
		return nil
	}
	base := host.DeepCopy()
	controllerutil.RemoveFinalizer(host, Finalizer)
	if err := r.Patch(ctx, host, client.MergeFrom(base)); err != nil {
		return err
	}
	if clean {
		r.Recorder.Eventf(host, link, corev1.EventTypeNormal, "PortsClean", "Release", "every SwitchPort of the host is clean or gone; the host may go")
		return nil
	}
	v.released = true
	for _, u := range v.unclean {
		r.Recorder.Eventf(host, link, corev1.EventTypeWarning, "PortUnknown", "Release",
			"the release annotation let the host go after one cleaning attempt: SwitchPort %s/%s is unlinked but not confirmed clean (%s); it is cleaned when the switch answers",
			u.SwitchPort.Namespace, u.SwitchPort.Name, u.Message)
	}
	return nil
}

// linksAny says whether the HostLink's status has a port linked to a configuration, which
// must be released.
func linksAny(link *networkv1alpha1.HostLink) bool {
	if link == nil {
		return false
	}
	for _, p := range link.Status.Ports {
		if p.Want != nil {
			return true
		}
	}
	return false
}

func nicNames(host *metal3v1alpha1.BareMetalHost) map[string]string {
	out := map[string]string{}
	if hw := host.Status.HardwareDetails; hw != nil {
		for _, n := range hw.NIC {
			out[normalMAC(n.MAC)] = n.Name
		}
	}
	return out
}

// createLink gives a host whose wiring was discovered a record of its own, owned by the host
// so that it goes with it.
func (r *Reconciler) createLink(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
	link := &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: host.Namespace, Name: host.Name}}
	if err := controllerutil.SetOwnerReference(host, link, r.Scheme()); err != nil {
		return err
	}
	return client.IgnoreAlreadyExists(r.Create(ctx, link))
}

// forget releases every port a deleted HostLink's status says it drove, then lets it go.
func (r *Reconciler) forget(ctx context.Context, link *networkv1alpha1.HostLink) error {
	if !controllerutil.ContainsFinalizer(link, Finalizer) {
		return nil
	}
	if err := r.release(ctx, link, nil); err != nil {
		return err
	}
	base := link.DeepCopy()
	controllerutil.RemoveFinalizer(link, Finalizer)
	return r.Patch(ctx, link, client.MergeFrom(base))
}

// ownedByAnother says whether the HostLink was made for another host of the same name.
func ownedByAnother(link *networkv1alpha1.HostLink, host *metal3v1alpha1.BareMetalHost) bool {
	for _, o := range link.OwnerReferences {
		if o.Kind == "BareMetalHost" && strings.HasPrefix(o.APIVersion, metal3v1alpha1.GroupVersion.Group+"/") && o.UID != host.UID {
			return true
		}
	}
	return false
}

// hostGone frees what a HostLink that outlives its host (one the infra team wrote) holds only
// on paper: a port it unlinked (cleaning, or let go unconfirmed by the release annotation)
// loses its holder record and its status entry, so no later host given that port waits for a
// host that no longer exists. A port still linked stays held: the host may live on elsewhere
// (clusterctl move), and deleting the HostLink releases it.
func (r *Reconciler) hostGone(ctx context.Context, link *networkv1alpha1.HostLink) error {
	recorded, err := recordedPorts(ctx, r, link)
	if err != nil {
		return err
	}
	for i := range recorded {
		if recorded[i].Spec.Configuration == nil {
			if err := r.dropRecord(ctx, &recorded[i], link); err != nil {
				return err
			}
		}
	}
	var kept []networkv1alpha1.HostPortStatus
	ready := 0
	for _, p := range link.Status.Ports {
		if p.Want != nil {
			kept = append(kept, p)
			if p.Ready {
				ready++
			}
		}
	}
	if len(kept) == len(link.Status.Ports) {
		return nil
	}
	base := link.DeepCopy()
	link.Status.Ports = kept
	link.Status.ReadyPorts = fmt.Sprintf("%d/%d", ready, len(kept))
	return r.Status().Patch(ctx, link, client.MergeFrom(base))
}

// letGoUnlessMoving lets a host go, but keeps rackwire's pause while the consumer is paused
// (clusterctl move): no hold is lifted mid-move, whatever happened to the wiring.
func (r *Reconciler) letGoUnlessMoving(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
	keep := false
	if held(host) {
		frozen, err := consumerPaused(ctx, r, host)
		if err != nil {
			return err
		}
		keep = frozen != ""
	}
	return r.letGo(ctx, host, keep)
}

// letGo removes what rackwire put on a host that has no wiring (any more): its finalizer,
// its pause unless keepPause, and the label that makes the host webhook fail closed.
func (r *Reconciler) letGo(ctx context.Context, host *metal3v1alpha1.BareMetalHost, keepPause bool) error {
	base := host.DeepCopy()
	changed := controllerutil.RemoveFinalizer(host, Finalizer)
	if _, ok := host.Labels[networkv1alpha1.LabelWired]; ok {
		delete(host.Labels, networkv1alpha1.LabelWired)
		changed = true
	}
	if !keepPause && host.Annotations[metal3v1alpha1.PausedAnnotation] == networkv1alpha1.PausedByRackwire {
		delete(host.Annotations, metal3v1alpha1.PausedAnnotation)
		changed = true
	}
	if !changed {
		return nil
	}
	return r.Patch(ctx, host, client.MergeFrom(base))
}

// drive links the port to what the host's state needs and records whether it carries it. A
// port another host holds is left alone: this host is held until it is free.
func (r *Reconciler) drive(ctx context.Context, v *view, w wired) error {
	clean := v.network == networkv1alpha1.NetworkClean
	ref := networkv1alpha1.ObjectRef{Name: w.port.Name, Namespace: w.port.Namespace}
	prev := previous(v.link, w.port)
	mine := claim{spec: w.source == networkv1alpha1.WiringSpec, since: time.Now().Truncate(time.Second), uid: v.link.UID}
	if prev != nil && prev.HeldBy == nil && prev.Since != nil {
		mine.since, mine.held = prev.Since.Time, true
	}
	other, err := holderOf(ctx, r, v.link, w, mine)
	if err != nil {
		return err
	}
	p := &networkv1alpha1.SwitchPort{}
	err = r.Get(ctx, w.port, p)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	found := err == nil
	if other == nil && found {
		if other, err = recordedHolder(ctx, r, v.link, p, mine); err != nil {
			return err
		}
	}
	if other != nil {
		st := networkv1alpha1.HostPortStatus{NIC: w.nic, MAC: w.mac, Source: w.source, SwitchPort: ref, Carries: "taken",
			HeldBy: &networkv1alpha1.ObjectRef{Kind: "HostLink", Namespace: other.Namespace, Name: other.Name}}
		st.Message = fmt.Sprintf("SwitchPort %s is held by host %s/%s, which claimed it first or through a HostLink entry", w.port, other.Namespace, other.Name)
		if clean {
			// Not this host's to clean: nothing to wait for.
			st.Ready = true
			v.ready++
		} else {
			v.taken = append(v.taken, st.Message)
		}
		if prev == nil || prev.HeldBy == nil || prev.HeldBy.Namespace != other.Namespace || prev.HeldBy.Name != other.Name {
			v.contests = append(v.contests, contest{port: w.port, other: other})
		}
		v.ports = append(v.ports, st)
		return nil
	}
	want := wantOf(w, v.network, v.tenant)
	if want == nil && v.network == networkv1alpha1.NetworkTenant && w.attachment != nil && v.tenant.accepted() {
		ref, problem, err := r.attached(ctx, v, *w.attachment)
		if err != nil {
			return err
		}
		if problem != "" {
			v.problems = append(v.problems, problem)
		}
		want = ref
	}
	since := metav1.NewTime(mine.since)
	st := networkv1alpha1.HostPortStatus{NIC: w.nic, MAC: w.mac, Source: w.source, SwitchPort: ref, Want: want, Since: &since}
	switch {
	case !found && clean:
		st.Carries, st.Ready, st.Since = "gone", true, nil
		st.Message = fmt.Sprintf("SwitchPort %s does not exist: nothing is left to clean, it counts as released", w.port)
		v.ready++
	case !found:
		st.Carries, st.Message = "missing", fmt.Sprintf("SwitchPort %s does not exist", w.port)
		v.failed = append(v.failed, st.Message)
	default:
		tried := true
		// A host takes a port (records itself as holder) only to drive it somewhere; cleaning
		// unlinks without taking. The precondition makes the take atomic (see holder.go).
		take := !clean && !holdsRecord(p, v.link)
		if take || !sameRef(p.Spec.Configuration, want, p.Namespace) {
			base := p.DeepCopy()
			p.Spec.Configuration = want
			if take {
				metav1.SetMetaDataAnnotation(&p.ObjectMeta, networkv1alpha1.AnnotationPortHolder, holderValue(v.link, w.source))
			}
			if err := r.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
				if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
					return err
				}
				st.Carries, st.Message = "refused", err.Error()
				v.failed = append(v.failed, fmt.Sprintf("SwitchPort %s: %s", w.port, err.Error()))
				if clean {
					v.unclean = append(v.unclean, networkv1alpha1.UnknownPort{SwitchPort: ref, HostUID: v.host.UID, Message: "unlinking was refused: " + err.Error()})
				}
				break
			}
			tried = false // the SwitchPort has not seen the new link yet
		}
		ok, carries, failed := carriage(p, want)
		st.Ready, st.Carries = ok, carries
		if failed != "" {
			st.Message = failed
			v.failed = append(v.failed, fmt.Sprintf("SwitchPort %s: %s", w.port, failed))
		}
		switch {
		case ok:
			v.ready++
			if clean {
				st.Since = nil // clean, the port is free for another host
				if err := r.dropRecord(ctx, p, v.link); err != nil {
					return err
				}
			}
		case clean && tried && (failed != "" || p.Status.ObservedGeneration == p.Generation):
			msg := st.Message
			if msg == "" {
				msg = "state " + carries
			}
			v.unclean = append(v.unclean, networkv1alpha1.UnknownPort{SwitchPort: ref, HostUID: v.host.UID, Message: msg})
		case clean:
			v.untried++
		}
	}
	v.ports = append(v.ports, st)
	return nil
}

// previous is the port's entry in the HostLink's status, if any.
func previous(link *networkv1alpha1.HostLink, port client.ObjectKey) *networkv1alpha1.HostPortStatus {
	for i := range link.Status.Ports {
		p := &link.Status.Ports[i]
		if p.SwitchPort.Name == port.Name && p.SwitchPort.Namespace == port.Namespace {
			return p
		}
	}
	return nil
}

// release cleans ports the host no longer has (a wiring entry removed or moved): those the
// status says it drove and that still carry what it linked.
func (r *Reconciler) release(ctx context.Context, link *networkv1alpha1.HostLink, wires []wired) error {
	still := map[client.ObjectKey]bool{}
	for _, w := range wires {
		still[w.port] = true
	}
	for _, old := range link.Status.Ports {
		key := client.ObjectKey{Namespace: old.SwitchPort.Namespace, Name: old.SwitchPort.Name}
		if still[key] || old.Want == nil {
			continue
		}
		p := &networkv1alpha1.SwitchPort{}
		if err := r.Get(ctx, key, p); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if !sameRef(p.Spec.Configuration, old.Want, p.Namespace) {
			continue // someone else linked it since
		}
		base := p.DeepCopy()
		p.Spec.Configuration = nil
		if holdsRecord(p, link) {
			delete(p.Annotations, networkv1alpha1.AnnotationPortHolder)
		}
		if err := r.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		r.Recorder.Eventf(link, p, corev1.EventTypeNormal, "PortReleased", "Clean", "SwitchPort %s is no longer wired to the host; it is cleaned", key)
		still[key] = true // released: the cache may still show its holder record
	}
	// Ports taken for the host that its status does not name: the manager stopped between
	// driving them and writing the status.
	recorded, err := recordedPorts(ctx, r, link)
	if err != nil {
		return err
	}
	for i := range recorded {
		p := &recorded[i]
		key := client.ObjectKeyFromObject(p)
		if still[key] || !holdsRecord(p, link) {
			continue
		}
		base := p.DeepCopy()
		p.Spec.Configuration = nil
		delete(p.Annotations, networkv1alpha1.AnnotationPortHolder)
		if err := r.Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		r.Recorder.Eventf(link, p, corev1.EventTypeNormal, "PortReleased", "Clean", "SwitchPort %s names the host as its holder but is no longer wired to it; it is cleaned", key)
	}
	return nil
}

// hold pauses the host (BMO's paused annotation, rackwire's value) while a port does not
// carry what the host's state needs, and lets it go once every port does. A host whose
// ports are being cleaned after BMO let it go, or that is detached, has nothing BMO would do.
func (r *Reconciler) hold(ctx context.Context, v *view) error {
	host := v.host
	if v.frozen != "" {
		return r.keepForMove(ctx, host)
	}
	value, paused := host.Annotations[metal3v1alpha1.PausedAnnotation]
	ours := paused && value == networkv1alpha1.PausedByRackwire
	need := v.ready < len(v.ports) && v.network != networkv1alpha1.NetworkClean &&
		v.link.Annotations[networkv1alpha1.AnnotationReleaseHost] != "true"
	switch {
	case need && !paused:
		base := host.DeepCopy()
		if host.Annotations == nil {
			host.Annotations = map[string]string{}
		}
		host.Annotations[metal3v1alpha1.PausedAnnotation] = networkv1alpha1.PausedByRackwire
		return r.Patch(ctx, host, client.MergeFrom(base))
	case !need && ours:
		base := host.DeepCopy()
		delete(host.Annotations, metal3v1alpha1.PausedAnnotation)
		return r.Patch(ctx, host, client.MergeFrom(base))
	}
	return nil
}

// keepForMove does what CAPM3 does not for a host rackwire already paused when its Cluster is
// paused (CAPM3 sees "already paused" and writes nothing): it copies the host's status into
// BMO's status annotation, so that a host moved by clusterctl keeps its status (BMO on the
// target restores it instead of registering and inspecting the host again). A host
// rackwire does not hold is CAPM3's to pause.
func (r *Reconciler) keepForMove(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
	if !held(host) || host.Annotations[metal3v1alpha1.StatusAnnotation] != "" {
		return nil
	}
	b, err := json.Marshal(host.Status)
	if err != nil {
		return err
	}
	base := host.DeepCopy()
	host.Annotations[metal3v1alpha1.StatusAnnotation] = string(b)
	return r.Patch(ctx, host, client.MergeFrom(base))
}

// held reports whether rackwire's pause is on the host now.
func held(host *metal3v1alpha1.BareMetalHost) bool {
	return host.Annotations[metal3v1alpha1.PausedAnnotation] == networkv1alpha1.PausedByRackwire
}

// writeStatus computes the HostLink's status and conditions in one place and patches once.
func (r *Reconciler) writeStatus(ctx context.Context, v *view) error {
	link := v.link
	base := link.DeepCopy()
	s := &link.Status
	s.HostState = string(v.host.Status.Provisioning.State)
	s.Network = v.network
	s.Ports = v.ports
	s.Held = held(v.host)
	s.ReadyPorts = fmt.Sprintf("%d/%d", v.ready, len(v.ports))
	s.ObservedGeneration = link.Generation
	s.Consumer = nil
	if v.tenant.accepted() {
		s.Consumer = &networkv1alpha1.ObjectRef{Kind: Metal3MachineGVK.Kind, Namespace: v.tenant.machine.Namespace, Name: v.tenant.machine.Name}
	}
	s.Unused = nil
	if v.found != nil {
		s.Unused = v.found.unused
		if v.found.entries {
			s.HostUID = v.host.UID
		}
	}
	if v.released {
		s.Unknown = append(s.Unknown, v.unclean...)
		if n := len(s.Unknown); n > maxUnknown {
			s.Unknown = s.Unknown[n-maxUnknown:]
		}
	}
	events := conditions(v, s)
	if equality.Semantic.DeepEqual(base.Status, link.Status) {
		return nil
	}
	if err := r.Status().Patch(ctx, link, client.MergeFrom(base)); err != nil {
		return err
	}
	for _, e := range events {
		r.Recorder.Eventf(link, v.host, e.kind, e.reason, "Link", "%s", e.message)
		r.Recorder.Eventf(v.host, link, e.kind, e.reason, "Link", "%s", e.message)
	}
	for _, c := range v.contests {
		// The holder hears about it too: its port is wanted by another host.
		holder := &metal3v1alpha1.BareMetalHost{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(c.other), holder); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		r.Recorder.Eventf(holder, v.host, corev1.EventTypeWarning, ReasonPortTaken, "Hold",
			"host %s/%s also claims SwitchPort %s; this host keeps it and that host is held", v.host.Namespace, v.host.Name, c.port)
		r.Recorder.Eventf(c.other, link, corev1.EventTypeWarning, ReasonPortTaken, "Hold",
			"host %s/%s also claims SwitchPort %s; this host keeps it and that host is held", v.host.Namespace, v.host.Name, c.port)
	}
	return nil
}

// maxUnknown bounds the record of ports let go unclean; the oldest go first.
const maxUnknown = 64

type event struct{ kind, reason, message string }

// Condition types and reasons of a HostLink.
const (
	ConditionHeld        = "Held"
	ReasonPortsMoving    = "PortsMoving"
	ReasonPortFailed     = "PortFailed"
	ReasonPortTaken      = "PortTaken"
	ReasonConsumerPaused = "ConsumerPaused"
	ReasonPortsReady     = "PortsReady"
	ReasonReleasedByHand = "ReleasedByAnnotation"
	ReasonPausedByOther  = "PausedByOther"
	ReasonWiringProblem  = "WiringProblem"
)

// conditions sets Ready and Held and returns the Events their changes deserve: a host held
// because a port failed or is another host's is always told which port and why.
func conditions(v *view, s *networkv1alpha1.HostLinkStatus) []event {
	var out []event
	gen := v.link.Generation
	ready := metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonPortsReady, ObservedGeneration: gen,
		Message: fmt.Sprintf("every port carries what the %s network needs", v.network)}
	switch {
	case len(v.failed) > 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPortFailed
		ready.Message = strings.Join(v.failed, "; ")
	case len(v.taken) > 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPortTaken
		ready.Message = strings.Join(v.taken, "; ")
	case v.ready < len(v.ports):
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonPortsMoving
		ready.Message = fmt.Sprintf("%d of %d ports carry what the %s network needs", v.ready, len(v.ports), v.network)
	case len(v.problems) > 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonWiringProblem
		ready.Message = strings.Join(v.problems, "; ")
	}
	heldCond := metav1.Condition{Type: ConditionHeld, Status: metav1.ConditionFalse, Reason: ReasonPortsReady, ObservedGeneration: gen,
		Message: "rackwire does not hold the host"}
	value, paused := v.host.Annotations[metal3v1alpha1.PausedAnnotation]
	release := v.link.Annotations[networkv1alpha1.AnnotationReleaseHost] == "true"
	switch {
	case v.frozen != "":
		heldCond.Reason = ReasonConsumerPaused
		heldCond.Message = v.frozen + ": rackwire neither takes nor lifts its pause until the consumer is unpaused"
		if s.Held {
			heldCond.Status = metav1.ConditionTrue
			heldCond.Message += fmt.Sprintf("; the host keeps rackwire's pause and BMO's %s annotation, so a move keeps its status", metal3v1alpha1.StatusAnnotation)
		}
	case s.Held && len(v.failed) > 0:
		heldCond.Status, heldCond.Reason = metav1.ConditionTrue, ReasonPortFailed
		heldCond.Message = "the host is paused until its ports carry what it needs, and a port failed: " + strings.Join(v.failed, "; ") +
			fmt.Sprintf(". Fix the port (its SwitchPort's conditions say more), or annotate this HostLink %s=true to lift the pause without it", networkv1alpha1.AnnotationReleaseHost)
	case s.Held && len(v.taken) > 0:
		heldCond.Status, heldCond.Reason = metav1.ConditionTrue, ReasonPortTaken
		heldCond.Message = "the host is paused: " + strings.Join(v.taken, "; ") + ". A SwitchPort serves one host; it waits until that host lets the port go"
	case s.Held:
		heldCond.Status, heldCond.Reason = metav1.ConditionTrue, ReasonPortsMoving
		heldCond.Message = fmt.Sprintf("the host is paused while its ports move to the %s network (%s ready)", v.network, s.ReadyPorts)
	case v.released:
		heldCond.Reason = ReasonReleasedByHand
		var names []string
		for _, u := range v.unclean {
			names = append(names, fmt.Sprintf("%s/%s (%s)", u.SwitchPort.Namespace, u.SwitchPort.Name, u.Message))
		}
		heldCond.Message = "the release annotation let the deleted host go after one cleaning attempt; unlinked but not confirmed clean, recorded in status.unknown and cleaned by their SwitchPorts when the switch answers: " +
			strings.Join(names, "; ")
	case v.ready < len(v.ports) && release && !v.host.DeletionTimestamp.IsZero() && v.network == networkv1alpha1.NetworkClean:
		heldCond.Reason = ReasonReleasedByHand
		heldCond.Message = fmt.Sprintf("the release annotation lets the deleted host go once each port not yet clean was unlinked and tried once (%d not tried yet)", v.untried)
	case v.ready < len(v.ports) && release:
		heldCond.Reason = ReasonReleasedByHand
		heldCond.Message = fmt.Sprintf("the release annotation lifted rackwire's pause: BMO goes on though only %s ports carry what the %s network needs; the host's finalizer stays until they are clean",
			s.ReadyPorts, v.network)
	case paused && value != networkv1alpha1.PausedByRackwire:
		heldCond.Reason, heldCond.Message = ReasonPausedByOther, fmt.Sprintf("the host is paused by %q, which rackwire leaves alone", value)
	}
	prevHeld := meta.FindStatusCondition(v.link.Status.Conditions, ConditionHeld)
	if (heldCond.Reason == ReasonPortFailed || heldCond.Reason == ReasonPortTaken) &&
		(prevHeld == nil || prevHeld.Reason != heldCond.Reason || prevHeld.Message != heldCond.Message) {
		out = append(out, event{corev1.EventTypeWarning, heldCond.Reason, heldCond.Message})
	}
	if prevHeld != nil && prevHeld.Status == metav1.ConditionTrue && heldCond.Status == metav1.ConditionFalse {
		out = append(out, event{corev1.EventTypeNormal, "Released", fmt.Sprintf("the host's ports carry what the %s network needs; the host goes on", v.network)})
	}
	meta.SetStatusCondition(&s.Conditions, ready)
	meta.SetStatusCondition(&s.Conditions, heldCond)
	return out
}

// attached is the configuration derived from a HostNetworkAttachment, which may come from the
// host's own namespace (the infra team's) or its consumer's (the tenant's) only.
func (r *Reconciler) attached(ctx context.Context, v *view, ref client.ObjectKey) (*networkv1alpha1.ConfigurationRef, string, error) {
	allowed := ref.Namespace == v.host.Namespace
	if v.tenant.accepted() && ref.Namespace == v.tenant.machine.Namespace {
		allowed = true
	}
	if !allowed {
		return nil, fmt.Sprintf("HostNetworkAttachment %s is neither in the host's namespace nor its consumer's; it is not applied", ref), nil
	}
	return attachmentConfig(ctx, r.Client, ref)
}

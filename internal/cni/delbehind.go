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
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Where the pool is written behind the ADDs, a DEL is local too: it marks the attachment's
// entries Releasing and answers, and the flusher takes them out of the pool in the same patch
// as the node's other writes, then deletes their reservations, and only then the record and
// the addresses' places in the node's view. Until then every address stays taken for the
// node (view) and for the cluster (reservation, pool entry): a DEL that is written behind
// frees later, never sooner.

func releasing(r *record) bool {
	for _, e := range r.Entries {
		if e.Releasing {
			return true
		}
	}
	return false
}

// maybeWritten says whether e may be in its pool: written, or a write of it was sent.
func maybeWritten(e entry) bool {
	return !e.Pending || e.Flushing || e.Tried
}

// releaseBehind marks rec's entries Releasing, the node lock held; false when rec is not one
// the flusher can release (no node slices, a claim's, an entry without a key): the DEL then
// frees it itself.
func (c *call) releaseBehind(rec *record) (bool, error) {
	if !c.deferred() || rec.Claim != "" || len(rec.Entries) == 0 {
		return false, nil
	}
	for _, e := range rec.Entries {
		if _, _, ok := e.key(); !ok {
			return false, nil
		}
	}
	for i := range rec.Entries {
		rec.Entries[i].Releasing, rec.Entries[i].Tries, rec.Entries[i].RetryAt = true, 0, time.Time{}
	}
	if err := c.st.save(rec); err != nil {
		return false, err
	}
	return true, c.st.markPending(rec.ContainerID, rec.IfName)
}

// unreserveReleased deletes the reservations of a released record whose pool entries are
// out, except where another holder has the offset now. It runs without the node's lock, and
// meanwhile GC or an ADD that found the slice full may have released the attachment
// themselves, and an ADD of the same container and interface reserved the same address
// again: the reservation's name and holder are then the same as the released one's. So it
// deletes only the object the attachment's ADD created, as it was then (its UID and
// resourceVersion, recorded by the ADD); what it cannot delete so (nothing recorded, another
// object there now, a later ADD's or one put back for this attachment, or the same one
// changed since) it returns, for checkReleased under the lock.
func (c *call) unreserveReleased(ctx context.Context, r *record, res *flushResult) (unsure []string, err error) {
	var errs []error
	for _, e := range r.Entries {
		id := e.Pool + "/" + e.Address
		if maybeWritten(e) && !res.removed[id] {
			return nil, errors.New("pool entry not taken out yet")
		}
		a, err := netip.ParseAddr(e.Address)
		if err != nil || res.held[id] {
			continue
		}
		name := ReservationName(c.cfg.PoolNetwork(), a)
		if e.ReservationUID == "" {
			unsure = append(unsure, name)
			continue
		}
		err = c.kube.delete(ctx, c.kube.wbPath("overlappingrangeipreservations", name), e.ReservationUID, e.ReservationVersion)
		switch {
		case apierrors.IsConflict(err):
			unsure = append(unsure, name)
		case err != nil:
			errs = append(errs, fmt.Errorf("releasing reservation %s: %w", name, err))
		}
	}
	return unsure, errors.Join(errs...)
}

// checkReleased deletes, the node lock held, the reservations unreserveReleased could not
// tell were r's: while the node's record of the attachment is still r's release, no ADD of
// this node can have reserved the address for a later one, so a reservation of the
// attachment there is r's (put back after someone deleted it, or recorded by an older
// version). done is true once nothing of r is left to delete.
func (c *call) checkReleased(ctx context.Context, r *record, names []string) (bool, error) {
	cur, err := c.st.load(r.ContainerID, r.IfName)
	if err != nil {
		return false, err
	}
	if cur == nil || cur.Gen != r.Gen || !releasing(cur) {
		// Released by someone else (GC, an ADD that found the slice full), who deleted its
		// reservations before dropping the record; what is there now is a later holder's.
		return true, nil
	}
	gone := *c
	gone.containerID, gone.ifName = r.ContainerID, r.IfName
	gone.podNS, gone.podName, _ = strings.Cut(r.PodRef, "/")
	var errs []error
	for _, name := range names {
		errs = append(errs, gone.unreserveName(ctx, name))
	}
	err = errors.Join(errs...)
	return err == nil, err
}

// finishRelease drops a released record, the node lock held, once done; else it holds
// it back for its next try.
func (c *call) finishRelease(r *record, done bool) error {
	cur, err := c.st.load(r.ContainerID, r.IfName)
	if err != nil || cur == nil {
		return err
	}
	if !releasing(cur) || cur.Gen != r.Gen {
		return nil // released meanwhile, and added again (and maybe deleted again: its own)
	}
	if !done {
		for i := range cur.Entries {
			e := &cur.Entries[i]
			e.Tries++
			e.RetryAt = time.Now().Add(flushBackoff(e.Tries))
		}
		return c.st.save(cur)
	}
	for _, e := range cur.Entries {
		if key, _, ok := e.key(); ok {
			c.noteCached(e.Pool, e.Range, key, false)
		}
	}
	c.st.unmarkPending(cur)
	return c.st.remove(cur.ContainerID, cur.IfName)
}

// afterRelease waits, for an ADD of an attachment whose DEL is still being written behind,
// until the flusher has released it (or frees it itself when no flusher lives): the new
// allocation must not meet the old one's reservation deletes. The lock is held on return;
// the record is then gone (nil).
func (c *call) afterRelease(ctx context.Context, rec *record) (*record, error) {
	for rec != nil && releasing(rec) {
		if !c.st.flusherAlive() {
			return nil, c.release(ctx, rec)
		}
		c.st.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if err := c.st.Lock(); err != nil {
			return nil, err
		}
		var err error
		if rec, err = c.st.load(rec.ContainerID, rec.IfName); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// settled is the record seen (read earlier) as it stands now, the node lock held, once no
// live flusher writes any of its entries; nil when it is gone, or is a later life of the
// attachment (added again since seen was read, by an ADD that nothing seen judged).
func (c *call) settled(ctx context.Context, seen *record) (*record, error) {
	cur, err := c.st.load(seen.ContainerID, seen.IfName)
	if err != nil || cur == nil {
		return nil, err
	}
	if cur, err = c.waitFlushed(ctx, cur); err != nil || cur == nil {
		return nil, err
	}
	if cur.Gen != seen.Gen {
		return nil, nil
	}
	return cur, nil
}

// errLeftToItsRelease is an ADD that failed after it saved its record and let the node's lock
// go: the record on the node is then the one to free, by the DEL or GC that will come, and it
// may by now be a retried ADD's (same container and interface), which a rollback by name
// would free.
var errLeftToItsRelease = errors.New("the attachment's record is left for its DEL")

// releaseNow carries out, the node lock held, the DELs of the node still waiting for the
// flusher, and says how many. It lets go of the lock while it waits for entries being written;
// own, the record of the ADD that calls it, is then as it stands after the wait.
func (c *call) releaseNow(ctx context.Context, own *record) (int, error) {
	if !c.deferred() {
		return 0, nil
	}
	recs, err := c.st.pendingRecords()
	if err != nil {
		return 0, err
	}
	// While the lock is let go, the DEL (or a GC) of this ADD's own attachment may come and
	// answer: it must find the record, and the ADD must not carry on after it, allocating what
	// nothing would release.
	if err := c.st.save(own); err != nil {
		return 0, err
	}
	n := 0
	for _, seen := range recs {
		if !releasing(seen) {
			continue
		}
		// An entry the flusher is writing lands after a release that does not wait for it,
		// held by nothing.
		r, err := c.settled(ctx, seen)
		if err != nil {
			return n, fmt.Errorf("%w (%w)", err, errLeftToItsRelease)
		}
		if r == nil || !releasing(r) {
			continue
		}
		gone := *c
		gone.containerID, gone.ifName = r.ContainerID, r.IfName
		gone.podNS, gone.podName, _ = strings.Cut(r.PodRef, "/")
		if err := gone.release(ctx, r); err != nil {
			return n, fmt.Errorf("%w (%w)", err, errLeftToItsRelease)
		}
		n++
	}
	cur, err := c.st.load(own.ContainerID, own.IfName)
	if err != nil {
		return n, fmt.Errorf("%w (%w)", err, errLeftToItsRelease)
	}
	if cur == nil || cur.Gen != own.Gen || releasing(cur) {
		return n, fmt.Errorf("network %q: %w: deleted while its ADD waited for the pool flusher", c.cfg.Name, errReleasedMeanwhile)
	}
	*own = *cur
	return n, nil
}

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

package ipalloc

import (
	"slices"
	"sort"
)

// seg is a run of addresses that belongs to one pool entry.
type seg struct {
	lo, hi uint128
	entry  int
}

func cmpSeg(a, b seg) int { return a.lo.cmp(b.lo) }

// cover adds the parts of [lo, hi] that segs does not hold yet. Entries are added in
// order, so where entries overlap the first one owns the addresses and its prefix,
// gateway and DNS servers apply, as Metal3, which walks the entries in order, does.
func cover(segs []seg, lo, hi uint128, entry int) []seg {
	var gaps []seg
	cur, covered := lo, false
	i := sort.Search(len(segs), func(i int) bool { return !segs[i].hi.less(lo) })
	for ; i < len(segs) && !hi.less(segs[i].lo); i++ {
		s := segs[i]
		if cur.less(s.lo) {
			gaps = append(gaps, seg{cur, s.lo.dec(), entry})
		}
		if !s.hi.less(hi) {
			covered = true
			break
		}
		cur = s.hi.inc()
	}
	if !covered {
		gaps = append(gaps, seg{cur, hi, entry})
	}
	segs = append(segs, gaps...)
	slices.SortFunc(segs, cmpSeg)
	return segs
}

// normalize sorts intervals and merges the overlapping and adjacent ones.
func normalize(ivs []seg) []seg {
	slices.SortFunc(ivs, cmpSeg)
	out := ivs[:0]
	for _, iv := range ivs {
		if n := len(out); n > 0 && (out[n-1].hi == maxUint128 || !out[n-1].hi.inc().less(iv.lo)) {
			if out[n-1].hi.less(iv.hi) {
				out[n-1].hi = iv.hi
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// subtract removes the normalized intervals ex from the sorted, disjoint segs.
func subtract(segs, ex []seg) []seg {
	var out []seg
	j := 0
	for _, s := range segs {
		for j < len(ex) && ex[j].hi.less(s.lo) {
			j++
		}
		lo, alive := s.lo, true
		for k := j; k < len(ex) && !s.hi.less(ex[k].lo); k++ {
			if lo.less(ex[k].lo) {
				out = append(out, seg{lo, ex[k].lo.dec(), s.entry})
			}
			if !ex[k].hi.less(s.hi) {
				alive = false
				break
			}
			lo = ex[k].hi.inc()
		}
		if alive {
			out = append(out, seg{lo, s.hi, s.entry})
		}
	}
	return out
}

// find returns the index of the segment holding k, or -1.
func find(segs []seg, k uint128) int {
	i := sort.Search(len(segs), func(i int) bool { return !segs[i].hi.less(k) })
	if i < len(segs) && !k.less(segs[i].lo) {
		return i
	}
	return -1
}

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
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// refusedForGood says whether err proves that the apiserver turned a write down and applied none of
// it: an answer in the 4xx range (admission, validation, authorization, a malformed request),
// except those that say to try again (a conflict, a throttle, a request timeout), a missing
// object (the caller's to create) and a JSON patch whose test failed (the object changed: the
// caller reads it again). A timeout, a 5xx or a lost answer proves nothing: the write may
// have landed.
func refusedForGood(err error) bool {
	var se apierrors.APIStatus
	if err == nil || !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	switch st.Code {
	case http.StatusNotFound, http.StatusRequestTimeout, http.StatusConflict, http.StatusGone, http.StatusTooManyRequests:
		return false
	}
	return st.Code >= 400 && st.Code < 500 && !patchTestFailed(st)
}

// patchTestFailed says whether st is the apiserver's answer to a JSON patch it could not
// apply (a "test" operation that failed): 422, reason Invalid, with details that name no
// object and no field. A refusal by validation or by an admission policy, also 422, names
// the object, the field, or both; an admission webhook's 422 carries what the webhook wrote,
// most often no reason and no details at all.
func patchTestFailed(st metav1.Status) bool {
	return st.Code == http.StatusUnprocessableEntity && st.Reason == metav1.StatusReasonInvalid &&
		st.Details != nil && st.Details.Kind == "" && len(st.Details.Causes) == 0
}

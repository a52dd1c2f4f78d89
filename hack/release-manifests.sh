#!/usr/bin/env bash
# Writes the release artifacts clusterctl reads for an IPAM provider into $1 (default out/):
# ipam-components.yaml, config/release (config/default, each area gated on its own variable)
# rendered by kustomize with clusterctl's ${VAR:=default} variables for what a user sets;
# ipam-claim-finalizer-policy.yaml, the claim-finalizer admission policies for clusters that
# serve them (config/release/policies); and metadata.yaml, the release series and the Cluster API contract they implement. $KUSTOMIZE is
# the kustomize binary, $VERSION the release (vX.Y.Z).
set -euo pipefail

OUT=${1:-out}
VERSION=${VERSION:?VERSION (vX.Y.Z) is required}
KUSTOMIZE=${KUSTOMIZE:?KUSTOMIZE is required}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [[ ! $VERSION =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
	echo "VERSION $VERSION is not vX.Y.Z" >&2
	exit 1
fi
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
mkdir -p "$OUT"

# config/release is config/default with one variable per area the manager serves
# (RACKWIRE_SERVE_IPAM, _SWITCHES, _NODE_SLICES, _PERSISTENT_IPS), in its --serve and in its
# webhooks' matchConditions. Besides them: the manager's and the CNI DaemonSet's image, the
# namespace everything lives in (also in the webhook configurations' service references and
# cert-manager's CA injection), the manager's log level and whether it elects a leader. clusterctl substitutes them from the environment
# or its config file, or takes the default after :=.
components=$("$KUSTOMIZE" build "$ROOT/config/release")
grep -q '^        - --leader-elect$' <<<"$components" || { echo "config/manager no longer passes --leader-elect" >&2; exit 1; }
sed -e "s|image: controller:latest|image: \${RACKWIRE_IMAGE:=ghcr.io/rackwire/rackwire:$VERSION}|" \
	-e 's|rackwire-system|${RACKWIRE_NAMESPACE:=rackwire-system}|g' \
	-e 's|^        - --leader-elect$|        - --leader-elect=${RACKWIRE_LEADER_ELECT:=true}\n        - --zap-log-level=${RACKWIRE_LOG_LEVEL:=info}|' \
	<<<"$components" >"$OUT/ipam-components.yaml"

# The claim-finalizer policies, apart from the components (config/release says why): applied
# after clusterctl init on a management cluster that serves MutatingAdmissionPolicies.
"$KUSTOMIZE" build "$ROOT/config/release/policies" >"$OUT/ipam-claim-finalizer-policy.yaml"

# Cluster API 1.14 (the version go.mod pins) speaks contract v1beta2.
cat >"$OUT/metadata.yaml" <<YAML
apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- major: $major
  minor: $minor
  contract: v1beta2
YAML
echo "$OUT/ipam-components.yaml"
echo "$OUT/ipam-claim-finalizer-policy.yaml"
echo "$OUT/metadata.yaml"

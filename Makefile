# rackwire: see README.md. `make dev` and `make test` are the two commands to know.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

IMG ?= ghcr.io/rackwire/rackwire:dev
LOCALBIN ?= $(shell pwd)/bin
GO ?= go

# Pinned tool versions: the module proxy here refuses @latest, and pins keep CI repeatable.
CONTROLLER_TOOLS_VERSION ?= v0.21.0
GOLANGCI_LINT_VERSION ?= v2.14.0
KUSTOMIZE_VERSION ?= v5.8.2
K8S_VERSION ?= 1.36.3
ETCD_VERSION ?= 3.6.8

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
KUBECTL ?= kubectl

# The CAPI IPAM types we serve; their CRDs are generated from the imported Go types.
CAPI_IPAM_TYPES := sigs.k8s.io/cluster-api/api/ipam/v1beta2
# IPAMClaim (k8snetworkplumbingwg/ipamclaims): generated from its types, identical to the
# module's artifacts/k8s.cni.cncf.io_ipamclaims.yaml but for the controller-gen version.
IPAMCLAIM_TYPES := github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1
# KubeVirt's VirtualMachine and VirtualMachineInstance, for the tests and make dev only.
KUBEVIRT_TYPES := kubevirt.io/api/core/v1

export K8S_VERSION ETCD_VERSION

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen bmo-crds kubevirt-crds ## Generate CRDs (ours and the external CAPI and IPAMClaim ones), RBAC and webhook configurations.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd paths="$(CAPI_IPAM_TYPES)" output:crd:artifacts:config=config/crd/external
	$(CONTROLLER_GEN) crd paths="$(IPAMCLAIM_TYPES)" output:crd:artifacts:config=config/crd/external

# KubeVirt ships no CRD files in its API module: generate VirtualMachine and
# VirtualMachineInstance from the Go types (float fields: allowDangerousTypes) into test/crds,
# with the status subresource the real VirtualMachine CRD has. They pass the client-side
# apply annotation limit: the control plane creates them, `kubectl apply --server-side` works.
.PHONY: kubevirt-crds
kubevirt-crds: controller-gen ## Generate KubeVirt's VM and VMI CRDs into test/crds (tests and make dev only).
	@tmp=$$(mktemp -d); \
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths="$(KUBEVIRT_TYPES)" output:crd:artifacts:config=$$tmp; \
	install -m 0644 $$tmp/kubevirt.io_virtualmachineinstances.yaml test/crds/; \
	{ cat $$tmp/kubevirt.io_virtualmachines.yaml; printf '    subresources:\n      status: {}\n'; } > test/crds/kubevirt.io_virtualmachines.yaml; \
	rm -rf $$tmp

# BMO's CRDs, exactly as the module ships them, for the test control plane and make dev (never
# deployed: BMO installs its own). The BMO manager the tests run is built by hack/bmo-bin.sh.
BMO_VERSION ?= v0.13.2

.PHONY: bmo-crds
bmo-crds: ## Copy BMO's CRDs from its module into test/crds.
	@dir=$$($(GO) mod download -json github.com/metal3-io/baremetal-operator@$(BMO_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	for f in "$$dir"/config/base/crds/bases/*.yaml; do install -m 0644 "$$f" test/crds/; done

.PHONY: bmo
bmo: ## Build the BMO manager the host-link tests run (once; reused afterwards).
	@BMO_VERSION=$(BMO_VERSION:v%=%) hack/bmo-bin.sh >/dev/null

# CAPM3's manager, which test/capm3 runs against rackwire; built in a module of its own, since it
# pins its own Cluster API (1.13.x).
CAPM3_VERSION ?= v1.13.2

# Metal3's ip-address-manager, the peer test/bench measures rackwire's Metal3 IPAM against;
# built in a module of its own, like CAPM3. `make bench` needs it, `make test` does not.
IPAM_MANAGER_VERSION ?= v1.13.2

.PHONY: ipam-manager
ipam-manager: ## Build Metal3's ip-address-manager and copy the CRDs it reads into bin/ipam-manager/ (once; reused afterwards).
	@IPAM_VERSION=$(IPAM_MANAGER_VERSION:v%=%) hack/ipam-manager-bin.sh >/dev/null

.PHONY: capm3
capm3: ## Build the CAPM3 manager and copy its and Cluster API's CRDs into bin/capm3/ (once; reused afterwards).
	@CAPM3_VERSION=$(CAPM3_VERSION:v%=%) hack/capm3-bin.sh >/dev/null

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt on the code.
	$(GO) fmt ./...

.PHONY: vet
vet: ## Run go vet on the code.
	$(GO) vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd, kube-controller-manager (devenv) and kubectl into bin/ (once; reused afterwards).
	@hack/envtest-bins.sh >/dev/null

.PHONY: cni-bins
cni-bins: ## Build the whereabouts CNI binary and node-slice controller, cnitool and the bridge plugin into bin/cni/ (once; reused afterwards).
	@hack/cni-bins.sh >/dev/null

.PHONY: test
test: manifests generate fmt vet envtest bmo capm3 cni-bins kustomize ## Unit, envtest and end-to-end tests (test/deploy applies the kustomize output; test/capm3 runs the CAPM3 manager).
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./... -coverprofile cover.out -timeout 30m

.PHONY: bench
bench: envtest cni-bins ipam-manager ## Benchmarks: pure ones, IPAM throughput, switch batching, node slices (against whereabouts) and a VM burst on a persistent network of the built manager against a local apiserver (tables).
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./internal/... -run '^$$' -bench . -benchmem
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./test/bench -run '^$$' -bench . -benchtime=1x -timeout 60m
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./test/bench/switches -run '^$$' -bench . -benchtime=1x -timeout 30m
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./test/bench/cni -run '^$$' -bench . -benchtime=1x -timeout 60m
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./test/bench/nodeslice -run '^$$' -bench . -benchtime=1x -timeout 60m
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(GO) test ./test/bench/ipamclaim -run '^$$' -bench . -benchtime=1x -timeout 30m

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary and the CNI plugin (bin/rackwire).
	$(GO) build -o $(LOCALBIN)/manager ./cmd/manager
	$(GO) build -o $(LOCALBIN)/rackwire ./cmd/cni

.PHONY: run
run: manifests generate fmt vet ## Run the manager against the cluster of your current kubeconfig (webhooks off).
	$(GO) run ./cmd/manager --webhooks=false --metrics-bind-address=0 --leader-elect=false

.PHONY: dev
dev: manifests generate envtest $(if $(BMO),bmo) ## Local control plane on loopback with CRDs, webhooks, the manager, the switch lab (root) and samples; BMO=1 adds BMO in test mode and a host.
	$(GO) build -o $(LOCALBIN)/ ./cmd/manager ./cmd/devenv
	KUBEBUILDER_ASSETS="$$(hack/envtest-bins.sh)" $(LOCALBIN)/devenv --manager $(LOCALBIN)/manager --dir $(LOCALBIN)/dev $(if $(BMO),--bmo)

.PHONY: docker-build
docker-build: ## Build the image: the manager and the CNI plugin (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: image-check
image-check: ## Run the Dockerfile's builder-stage commands without a Docker engine and check every binary the image copies.
	hack/image-check.sh

.PHONY: docker-push
docker-push: ## Push the manager image.
	docker push $(IMG)

##@ Release

RELEASE_VERSION ?= v0.1.0
RELEASE_DIR ?= out

.PHONY: release-manifests
release-manifests: manifests kustomize ## Write clusterctl's artifacts for the IPAM provider into RELEASE_DIR: ipam-components.yaml, ipam-claim-finalizer-policy.yaml and metadata.yaml.
	VERSION=$(RELEASE_VERSION) KUSTOMIZE=$(KUSTOMIZE) hack/release-manifests.sh $(RELEASE_DIR)

##@ Deployment

.PHONY: install
install: manifests kustomize ## Install our CRDs into the cluster of your current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: install-external
install-external: manifests ## Install the Cluster API IPAM and Multus NetworkAttachmentDefinition CRDs, for clusters without them.
	$(KUBECTL) apply --server-side -f config/crd/external

.PHONY: uninstall
uninstall: manifests kustomize ## Remove our CRDs (and every object of them) from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (needs cert-manager) with image IMG.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	cd config/cni && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: deploy-monitoring
deploy-monitoring: kustomize ## The ServiceMonitor, alerts (Prometheus Operator) and Grafana dashboard ConfigMap.
	$(KUSTOMIZE) build config/prometheus | $(KUBECTL) apply --server-side -f -
	$(KUSTOMIZE) build config/grafana | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT)
$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: kustomize
kustomize: $(KUSTOMIZE)
$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

# go-install-tool installs a pinned tool into bin/ under a versioned name, so a version bump
# in this file rebuilds it. $1 target path, $2 package, $3 version.
define go-install-tool
@set -e; tmp=$$(mktemp -d); \
echo "installing $(2)@$(3)"; \
GOBIN=$$tmp GOFLAGS=-mod=mod $(GO) install $(2)@$(3); \
mv $$tmp/* $(1); rm -rf $$tmp
endef

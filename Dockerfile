# Build the manager binary.
FROM golang:1.26-bookworm AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Copy the Go module manifests and download the modules first, so that this layer is cached
# as long as go.mod and go.sum do not change.
COPY go.mod go.sum ./
RUN go mod download

# Copy the sources (.dockerignore keeps bin/ and other local files out).
COPY . .

# GOARCH is left to the build platform when TARGETARCH is empty (plain `docker build`), and
# set by `docker buildx build --platform` for other architectures.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -o manager ./cmd/manager \
    && CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -o rackwire-cni ./cmd/cni

# The runtime: the manager drives switches through Ansible (the network-runner role, which
# python3-network-runner installs into /etc/ansible/roles/network-runner), over ssh with
# paramiko or sshpass, so the image is a slim Debian rather than distroless.
FROM debian:bookworm-slim

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends \
        ansible \
        python3-network-runner \
        openssh-client \
        sshpass \
        python3-paramiko \
        tini \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# HOME is where Ansible (~/.ansible/tmp) and ssh (~/.ssh) keep their state. The Deployment of
# config/manager runs with a read-only root filesystem, so it mounts a writable /tmp and sets
# HOME=/tmp instead.
ENV HOME=/home/rackwire

RUN groupadd --gid 65532 rackwire \
    && useradd --uid 65532 --gid 65532 --home-dir /home/rackwire --create-home \
        --shell /usr/sbin/nologin rackwire

COPY --from=builder /workspace/manager /manager
# The CNI plugin and its installer (config/cni's DaemonSet runs `/rackwire-cni install`).
COPY --from=builder /workspace/rackwire-cni /rackwire-cni
USER 65532:65532

# tini is PID 1: it forwards signals to the manager and reaps the ansible-playbook and ssh
# processes that the manager starts.
ENTRYPOINT ["/usr/bin/tini", "--", "/manager"]

#!/usr/bin/env bash
# Builds what the Dockerfile's builder stage builds, with its own commands, without a Docker
# engine: the sources as COPY . . sees them (tracked files, less .dockerignore's bin/), the
# builder's RUN lines after `go mod download` run as they are, then every file a later stage
# copies from the builder must exist. So a renamed command or a broken build fails here.
set -euo pipefail
cd "$(dirname "$0")/.."

dockerfile=${DOCKERFILE:-Dockerfile}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The RUN commands of the stage named builder, one a line (continuation lines joined).
runs=$(awk '
	/^FROM / { in_builder = ($0 ~ / AS builder$/); next }
	!in_builder { next }
	cont { line = $0; cont = sub(/\\$/, "", line); cmd = cmd " " line; if (!cont) print cmd; next }
	/^RUN / { line = substr($0, 5); cont = sub(/\\$/, "", line); cmd = line; if (!cont) print cmd }
' "$dockerfile" | grep -v '^go mod download$' || true)
if [[ -z $runs ]]; then
	echo "image-check: no RUN in the builder stage of $dockerfile" >&2
	exit 1
fi

git ls-files -z --cached --others --exclude-standard | grep -zv '^bin/' | xargs -0 cp --parents -t "$tmp" 2>/dev/null || true
echo "image-check: running the builder stage's commands in a copy of the sources"
while IFS= read -r cmd; do
	echo "image-check: RUN $cmd" | tr -s ' '
	(cd "$tmp" && TARGETOS='' TARGETARCH='' bash -euo pipefail -c "$cmd")
done <<<"$runs"

# Every COPY --from=builder source must have been built.
missing=0
while read -r src; do
	src=${src#/workspace/}
	if [[ ! -s $tmp/$src ]]; then
		echo "image-check: the builder stage did not produce $src" >&2
		missing=1
	else
		echo "image-check: built $src ($(du -h "$tmp/$src" | cut -f1))"
	fi
done < <(awk '/^COPY --from=builder / { print $3 }' "$dockerfile")
exit $missing

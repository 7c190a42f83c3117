#!/usr/bin/env bash
# Finds or builds the Dapr runtime (daprd, placement, scheduler) at the pinned version.
# Order: $DAPR_BIN_DIR, ~/.dapr/bin, then a cache built from the Go module proxy (docs/dapr-runtime.md).
# Prints the directory holding the three binaries on stdout; progress goes to stderr.
# What the cached build changes from upstream, and why: docs/dapr-runtime.md.
set -euo pipefail

DAPR_VERSION="${DAPR_VERSION:-1.18.3}"
CACHE_ROOT="${GATEWAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/payg-gateway}"
BUILD_DIR="$CACHE_ROOT/dapr-v$DAPR_VERSION"
BINARIES=(daprd placement scheduler)
# Bump when the recipe below changes: a source tree or binaries from another recipe are rebuilt.
RECIPE="payg-2"

log() { printf '[dapr-runtime] %s\n' "$*" >&2; }

has_all() {
  local dir="$1" b
  for b in "${BINARIES[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

cached_build_ok() { has_all "$BUILD_DIR/bin" && [ "$(cat "$BUILD_DIR/bin/RECIPE" 2>/dev/null)" = "$RECIPE" ]; }

for candidate in "${DAPR_BIN_DIR:-}" "$HOME/.dapr/bin"; do
  if [ -n "$candidate" ] && has_all "$candidate"; then
    found=$("$candidate/daprd" --version 2>/dev/null || true)
    [ "$found" = "$DAPR_VERSION" ] || log "warning: $candidate/daprd is version '$found', the project pins $DAPR_VERSION"
    echo "$candidate"
    exit 0
  fi
done
if cached_build_ok; then
  echo "$BUILD_DIR/bin"
  exit 0
fi

if [ "$DAPR_VERSION" != "1.18.3" ]; then
  log "the build recipe is written for Dapr 1.18.3; set DAPR_BIN_DIR to use Dapr $DAPR_VERSION"
  exit 1
fi
command -v go >/dev/null || { log "Go is needed to build the Dapr runtime and was not found"; exit 1; }

# Checksum verification stays on: the module zips come from GOPROXY and are checked against
# dapr's own go.sum plus the two pinned lines below (-mod=readonly: nothing unverified is added);
# the one look-up outside go.sum (the dapr module itself) goes to the default checksum database.
unset GOSUMDB GONOSUMDB GOPRIVATE GOINSECURE GOFLAGS
export GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0

# Upstream v1.18.3 needs three module versions the Go module proxy here refuses (403):
#   github.com/dapr/durabletask-go@v0.12.4 -> replaced by v0.12.1 (same go.mod; workflow engine only)
#   github.com/iskorotkov/avro/v2@v2.33.1, github.com/twmb/pulsar-client-go@… -> used only by the
#   Pulsar pub/sub component, which is left out of daprd.
DURABLETASK_FROM="github.com/dapr/durabletask-go@v0.12.4"
DURABLETASK_TO="github.com/dapr/durabletask-go@v0.12.1"
DURABLETASK_SUMS="github.com/dapr/durabletask-go v0.12.1 h1:CIqG2HJGnU7kRtHICuRSSSO9RdHax99HdvHEaxRGE04=
github.com/dapr/durabletask-go v0.12.1/go.mod h1:+8ABEQn9JvRPRvPr1QNVxdkdLPgJgpJwcpie5ZDt7nk="
PULSAR_FILES=(cmd/daprd/components/pubsub_pulsar.go cmd/daprd/components/pubsub_pulsar_test.go)
# Fixes of upstream bugs this project meets, applied in name order (docs/dapr-runtime.md says
# what each fixes and why).
PATCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/dapr-patches"

mkdir -p "$BUILD_DIR"
# One build at a time (parallel test runs); whoever waited finds the finished build.
exec 9>"$BUILD_DIR/.lock"
if ! flock -n 9; then
  log "another build of Dapr v$DAPR_VERSION is running; waiting for it"
  flock 9
fi
if cached_build_ok; then
  echo "$BUILD_DIR/bin"
  exit 0
fi

log "building Dapr v$DAPR_VERSION into $BUILD_DIR (first run only; several minutes on 2 cores)"
scratch=$(mktemp -d)
module_dir=$(cd "$scratch" && go mod download -json "github.com/dapr/dapr@v$DAPR_VERSION" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
rmdir "$scratch"
[ -d "$module_dir" ] || { log "go mod download github.com/dapr/dapr@v$DAPR_VERSION did not give a module directory"; exit 1; }

src="$BUILD_DIR/src"
if [ "$(cat "$src/.payg-recipe" 2>/dev/null)" != "$RECIPE" ]; then
  log "preparing a fresh writable copy of the module source"
  rm -rf "$src" "$src.tmp"
  cp -r "$module_dir" "$src.tmp"
  chmod -R u+w "$src.tmp"
  (
    cd "$src.tmp"
    rm -f "${PULSAR_FILES[@]}"
    go mod edit -replace "$DURABLETASK_FROM=$DURABLETASK_TO"
    printf '%s\n' "$DURABLETASK_SUMS" >> go.sum
    for fix in "$PATCH_DIR"/*.patch; do
      log "applying $(basename "$fix")"
      patch -p1 --forward --batch --quiet < "$fix" || { log "$(basename "$fix") does not apply to Dapr v$DAPR_VERSION"; exit 1; }
    done
    echo "$RECIPE" > .payg-recipe
  )
  mv "$src.tmp" "$src"
fi
cd "$src"

targets=(./cmd/daprd ./cmd/placement ./cmd/scheduler)
tags=stablecomponents
log "resolving and downloading the modules the three commands need (verified against go.sum)"
total=$(go list -deps -tags="$tags" "${targets[@]}" | wc -l)
log "compiling $total packages (the slow part; cached packages are skipped)"

start=$(date +%s)
rm -rf "$BUILD_DIR/bin.tmp"
mkdir -p "$BUILD_DIR/bin.tmp"
pkg="github.com/dapr/dapr/pkg/buildinfo"
ldflags="-s -w -X $pkg.version=$DAPR_VERSION -X $pkg.gitversion=v$DAPR_VERSION+$RECIPE -X $pkg.gitcommit=none"
# -v prints each package as it is compiled; everything that is not a package path (errors) passes through.
go build -v -trimpath -tags="$tags" -ldflags "$ldflags" -o "$BUILD_DIR/bin.tmp/" "${targets[@]}" 2>&1 \
  | awk -v total="$total" '
      /^[A-Za-z0-9._~\/-]+$/ { n++; if (n % 100 == 0) { printf "[dapr-runtime] compiled %d of at most %d packages\n", n, total > "/dev/stderr"; fflush("/dev/stderr") } next }
      { print > "/dev/stderr" }'
has_all "$BUILD_DIR/bin.tmp" || { log "the build did not produce all of: ${BINARIES[*]}"; exit 1; }
log "compiled in $(( $(date +%s) - start ))s"

echo "$RECIPE" > "$BUILD_DIR/bin.tmp/RECIPE"
rm -rf "$BUILD_DIR/bin"
mv "$BUILD_DIR/bin.tmp" "$BUILD_DIR/bin"
log "done: $BUILD_DIR/bin"
echo "$BUILD_DIR/bin"

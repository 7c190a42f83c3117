#!/usr/bin/env bash
# Makes sure the schema-based fuzzer (schemathesis, from PyPI) is installed in its own virtual
# environment under ~/.cache/payg-gateway, for test/embedded/fuzz.test.ts (docs/testing.md).
# Prints the path of its command. Needs python3 with venv; pip reaches PyPI (or its mirror).
set -euo pipefail

VERSION=4.32.5
DIR="${PAYG_CACHE_DIR:-$HOME/.cache/payg-gateway}/schemathesis-$VERSION"
BIN="$DIR/bin/schemathesis"
log() { printf '[ensure-schemathesis] %s\n' "$*" >&2; }

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "$BIN"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { log "python3 is missing: install Python 3.9 or newer"; exit 1; }
log "installing schemathesis $VERSION into $DIR"
rm -rf "$DIR"
python3 -m venv "$DIR" || { log "python3 -m venv failed (Debian: apt-get install python3-venv)"; exit 1; }
"$DIR/bin/pip" install --quiet --disable-pip-version-check --retries 4 --timeout 60 "schemathesis==$VERSION"
"$BIN" --version >&2
echo "$BIN"

#!/usr/bin/env bash
# Makes sure the schema-based fuzzer (schemathesis, from PyPI) is installed in its own virtual
# environment under ~/.cache/payg-gateway, for test/embedded/fuzz.test.ts (docs/testing.md).
# Prints the path of its command. Needs python3 with venv; pip reaches PyPI (or its mirror).
set -euo pipefail
source "$(dirname "$0")/lib/pip-venv.sh"

VERSION=4.32.5
DIR="${PAYG_CACHE_DIR:-$HOME/.cache/payg-gateway}/schemathesis-$VERSION"
BIN="$DIR/bin/schemathesis"

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "$BIN"
  exit 0
fi
venv_install ensure-schemathesis "$DIR" "schemathesis==$VERSION"
"$BIN" --version >&2
echo "$BIN"

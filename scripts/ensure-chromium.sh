#!/usr/bin/env bash
# Makes sure Debian's chromium is installed, for the web console's browser tests (playwright-core
# drives it; it never downloads a browser of its own). Installs it with apt-get when it is
# missing; prints the binary's path on stdout (everything else goes to stderr).
set -euo pipefail

log() { printf '[ensure-chromium] %s\n' "$*" >&2; }
found() { command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null; }

if ! bin=$(found); then
  command -v apt-get >/dev/null 2>&1 || { log "chromium is missing and apt-get is not available; install Chromium and put it on PATH"; exit 1; }
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  log "installing Debian's chromium"
  { "${as_root[@]}" apt-get update && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } >&2
  bin=$(found) || { log "apt-get finished but chromium is still not on PATH"; exit 1; }
fi
log "using $bin ($("$bin" --version 2>/dev/null | head -n1))"
echo "$bin"

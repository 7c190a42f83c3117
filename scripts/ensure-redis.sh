#!/usr/bin/env bash
# Makes sure Redis is installed (Debian's redis-server), for the Dapr topology (docs/dapr-runtime.md).
# Installs it with apt-get when redis-server is not on PATH; starts nothing.
set -euo pipefail

log() { printf '[ensure-redis] %s\n' "$*" >&2; }

if command -v redis-server >/dev/null 2>&1; then
  log "found $(command -v redis-server) ($(redis-server --version | head -n1))"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || { log "redis-server is missing and apt-get is not available; install Redis 6 or newer yourself"; exit 1; }
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { log "installing redis-server needs root (or sudo)"; exit 1; }
  SUDO=(sudo)
fi

log "installing Debian's redis-server"
"${SUDO[@]}" apt-get update
# The package's own service is not wanted: the topology runs redis-server itself. RUNLEVEL=1 keeps
# invoke-rc.d from starting it on hosts without systemd; under systemd run `systemctl disable --now
# redis-server` if you do not want it (the topology also uses a Redis that already answers on its port).
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y --no-install-recommends redis-server
command -v redis-server >/dev/null 2>&1 || { log "apt-get finished but redis-server is still not on PATH"; exit 1; }
log "installed $(redis-server --version | head -n1)"

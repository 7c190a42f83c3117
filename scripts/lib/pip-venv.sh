# Sourced by the ensure-*.sh scripts that install pinned PyPI packages for the tests, each in its
# own virtual environment under ~/.cache/payg-gateway (pip reaches PyPI or its mirror).

# venv_install <log name> <dir> <requirement>...: a fresh environment in <dir> holding them.
venv_install() {
  local name=$1 dir=$2
  shift 2
  command -v python3 >/dev/null 2>&1 || { printf '[%s] python3 is missing: install Python 3.9 or newer\n' "$name" >&2; return 1; }
  printf '[%s] installing %s into %s\n' "$name" "$*" "$dir" >&2
  rm -rf "$dir"
  python3 -m venv "$dir" || { printf '[%s] python3 -m venv failed (Debian: apt-get install python3-venv)\n' "$name" >&2; return 1; }
  "$dir/bin/pip" install --quiet --disable-pip-version-check --retries 4 --timeout 60 "$@"
}

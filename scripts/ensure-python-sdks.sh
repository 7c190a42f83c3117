#!/usr/bin/env bash
# Makes sure the official Python SDKs of OpenAI and Anthropic (from PyPI) are installed in their
# own virtual environment under ~/.cache/payg-gateway, for the Python half of the compatibility
# suite (test/python/compat_sdks.py; docs/testing.md). Prints the path of that environment's
# python. Needs python3 with venv; pip reaches PyPI (or its mirror).
set -euo pipefail
source "$(dirname "$0")/lib/pip-venv.sh"

OPENAI=3.57.0
ANTHROPIC=2.14.0
DIR="${PAYG_CACHE_DIR:-$HOME/.cache/payg-gateway}/python-sdks-openai-$OPENAI-anthropic-$ANTHROPIC"
PY="$DIR/bin/python"

if [ -x "$PY" ] && "$PY" -c 'import openai, anthropic' >/dev/null 2>&1; then
  echo "$PY"
  exit 0
fi
venv_install ensure-python-sdks "$DIR" "openai==$OPENAI" "anthropic==$ANTHROPIC"
"$PY" -c 'import openai, anthropic, sys; print(f"openai {openai.__version__}, anthropic {anthropic.__version__}", file=sys.stderr)'
echo "$PY"

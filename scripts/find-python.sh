#!/usr/bin/env bash
# Print the path of a working Python >= 3.12 (lerobot 0.6.1 requires it), or fail saying how to get one.
# Order: $PYTHON, python3.12 / python3.13 that actually run (pyenv shims may exist and
# still answer "command not found"), then pyenv's installed versions.
set -u
works() { "$1" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
candidates+=(python3.12 python3.13)
roots=()
command -v pyenv >/dev/null 2>&1 && roots+=("$(pyenv root)")
roots+=("$HOME/.pyenv")
for root in "${roots[@]}"; do
  for p in "$root"/versions/3.1[23]*/bin/python3.1[23]; do [ -e "$p" ] && candidates+=("$p"); done
done
for c in "${candidates[@]}"; do
  if works "$c"; then command -v "$c" 2>/dev/null || echo "$c"; exit 0; fi
done
echo "error: no working Python 3.12 or 3.13 found. Install one (e.g. 'pyenv install 3.12' or" \
     "'apt-get install python3.12 python3.12-venv') or set PYTHON=/path/to/python3.12." >&2
exit 1

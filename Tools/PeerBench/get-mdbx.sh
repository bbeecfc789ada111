#!/usr/bin/env bash
# Fetches a built libmdbx.so for peer-bench's `mdbx` engine: the PyPI wheel `libmdbx` ships one
# (mdbx/lib/libmdbx.so). It lands in Tools/PeerBench/.mdbx/libmdbx.so (not committed); point
# MDBX_LIBRARY at it (Tools/bench-compare.sh does). Needs pip and network access to PyPI.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="$HERE/.mdbx"
mkdir -p "$DEST"
if [ ! -f "$DEST/libmdbx.so" ]; then
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    pip download --quiet --no-deps --dest "$WORK" libmdbx
    python3 -m zipfile -e "$WORK"/libmdbx-*.whl "$WORK/wheel"
    cp "$WORK/wheel/mdbx/lib/libmdbx.so" "$DEST/libmdbx.so"
fi
echo "$DEST/libmdbx.so"

#!/usr/bin/env bash
# Builds the envelope-c transform: `build.sh OUT_DIR` writes OUT_DIR/envelope_c.wasm,
# a wasm32 core module with no imports that exports `memory`, `cabi_realloc` and
# `hookgate:transform/transform@0.1.0#transform`. Needs Debian's `clang` and
# `lld` (apt-get install clang lld); no libc, no network.
# CLANG and WASM_LD override which tools are used.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)/envelope_c.wasm"

# The first of the names a tool goes by that is on PATH (Debian installs
# versioned names, e.g. wasm-ld-14, and the unversioned one only from `lld`).
first_of() {
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

clang="${CLANG:-$(first_of clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14 || true)}"
if [ -z "$clang" ]; then
  echo "envelope-c: clang not found; install it with: apt-get install -y clang lld" >&2
  exit 1
fi
wasm_ld="${WASM_LD:-$(first_of wasm-ld wasm-ld-19 wasm-ld-18 wasm-ld-17 wasm-ld-16 wasm-ld-15 wasm-ld-14 || true)}"
if [ -z "$wasm_ld" ]; then
  echo "envelope-c: wasm-ld not found; install it with: apt-get install -y lld" >&2
  exit 1
fi

# clang looks for the linker as `wasm-ld`; -fuse-ld takes a path to another name.
# -mbulk-memory turns __builtin_memcpy into `memory.copy` (there is no libc memcpy);
# an undefined symbol is a link error, never an import.
"$clang" --target=wasm32-unknown-unknown -std=c11 -O2 \
  -ffreestanding -nostdlib -mbulk-memory \
  -Wall -Wextra -Werror \
  -fuse-ld="$wasm_ld" \
  -Wl,--no-entry -Wl,--strip-all -Wl,--gc-sections \
  -Wl,-z,stack-size=65536 \
  -o "$out" "$here/abi.c" "$here/transform.c"

echo "$out"

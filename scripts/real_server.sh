#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU only) and a tiny random-weights GGUF model for the `real_server` tests
# (docs/LLM.md "A real server in the tests"), cached under build/llama/ so that it is made once per build folder.
#
# The source is the llama.cpp release that node-llama-cpp@3.21.1 builds against: its npm package carries it as a
# git bundle (package/llama/gitRelease.bundle). No trained weights can be downloaded here, so the model is written
# by llama.cpp's own gguf-py with random weights and the Qwen2 vocabulary llama.cpp ships: its text is noise, and the
# tests use it for the server's protocol, grammar-constrained decoding, slots, usage counts and errors.
#
# Usage: bash scripts/real_server.sh [BUILD_DIR]   (default build/); prints the server's and the model's paths.
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath -m "${1:-build}")"
dir="$build/llama"
server="$dir/build/bin/llama-server"
model="$dir/tiny-random-qwen2.gguf"
mkdir -p "$dir"

if [ ! -d "$dir/src/.git" ]; then
  echo "real_server: fetching llama.cpp's source (node-llama-cpp@3.21.1's git bundle) from npm" >&2
  rm -rf "$dir/pack" "$dir/src"
  mkdir -p "$dir/pack"
  (cd "$dir/pack" && npm pack --silent node-llama-cpp@3.21.1 >/dev/null)
  tar -xzf "$dir/pack"/node-llama-cpp-3.21.1.tgz -C "$dir/pack" package/llama/gitRelease.bundle
  git clone -q "$dir/pack/package/llama/gitRelease.bundle" "$dir/src" 2>/dev/null
  rm -rf "$dir/pack"
fi

if [ ! -x "$server" ]; then
  echo "real_server: building llama-server, CPU only (5-14 minutes on two cores, once per build folder)" >&2
  cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    --log-level=WARNING >/dev/null
  cmake --build "$dir/build" -j"$(nproc)" --target llama-server >"$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; echo "real_server: llama-server did not build (log: $dir/build.log)" >&2; exit 1; }
fi

if [ ! -s "$model" ]; then
  echo "real_server: writing a random-weights GGUF model with llama.cpp's gguf-py" >&2
  PYTHONPATH="$dir/src/gguf-py" /usr/bin/python3 tests/real_server/make_model.py \
    "$dir/src/models/ggml-vocab-qwen2.gguf" "$model.tmp"
  mv -f "$model.tmp" "$model"
fi
echo "$server"
echo "$model"

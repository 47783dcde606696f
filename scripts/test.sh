#!/usr/bin/env bash
# Installs what is missing and builds the CLI (scripts/setup.sh), then builds the tests and what they need
# (the example plug-in) and runs the whole suite with ctest, the install + out-of-tree plug-in test included.
# Usage: bash scripts/test.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh -DADVPLAN_BUILD_TESTS=ON "$@"
# The report's browser test (tests/browser/): Debian's Chromium and Node, and playwright-core from npm (never
# `npx playwright install`: it drives the system Chromium), into build/browser/ so nothing lands in the tree.
browser_missing=()
dpkg -s chromium >/dev/null 2>&1 || browser_missing+=(chromium)
# Node from any source (Debian's nodejs and npm, or one already installed): only a missing command is installed.
command -v node >/dev/null || browser_missing+=(nodejs)
command -v npm >/dev/null || browser_missing+=(npm)
# llama.cpp's gguf-py (the real_server tests' model writer) reads YAML.
dpkg -s python3-yaml >/dev/null 2>&1 || browser_missing+=(python3-yaml)
# The real_server tests ask llama-server's /health and /metrics with curl.
command -v curl >/dev/null || browser_missing+=(curl)
if [ ${#browser_missing[@]} -gt 0 ]; then
  echo "test: installing ${browser_missing[*]} for the browser and real-server tests" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${browser_missing[@]}" >/dev/null
fi
if [ ! -d build/browser/node_modules/playwright-core ]; then
  echo "test: installing playwright-core from npm into build/browser/" >&2
  mkdir -p build/browser
  npm install --prefix build/browser --no-audit --no-fund --silent playwright-core@1.65.2 >/dev/null
fi
# The real_server tests (tests/real_server/, docs/LLM.md): llama.cpp's llama-server and a random-weights model,
# built once per build folder (5-14 minutes on two cores the first time). With ADVPLAN_REQUIRE_REAL_SERVER=1 a
# missing server fails those tests instead of skipping them.
bash scripts/real_server.sh build >/dev/null
export ADVPLAN_REQUIRE_REAL_SERVER=1
jobs="$(nproc)"
echo "test: building the tests with ${jobs} job(s)" >&2
cmake --build build -j"${jobs}" --target advplan_tests
ctest --test-dir build --output-on-failure -j"${jobs}"

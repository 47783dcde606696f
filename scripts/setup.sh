#!/usr/bin/env bash
# Installs advplan's Debian 12 packages (when missing), then configures build/ and builds the `advplan`
# target: the CLI and libadvplan.so, nothing else (scripts/test.sh builds the tests).
# Usage: bash scripts/setup.sh [extra cmake args, e.g. -DADVPLAN_SANITIZE=ON]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make pkg-config git
  libboost-graph-dev libeigen3-dev libtbb-dev nlohmann-json3-dev libsimdjson-dev libyaml-cpp-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libcpp-httplib-dev libcurl4-openssl-dev libssl-dev libpagmo-dev
  python3 python3-numpy python3-matplotlib
  libglpk-dev libgmp-dev lrslib libopenmpi-dev openmpi-bin libmimalloc-dev libsleef-dev)

# the cross-CPU determinism test runs the CLI on emulated baseline and AVX2 CPUs (tests/core/cross_cpu_test.cpp)
PACKAGES+=(qemu-user)

# the Python module (python/, docs/PYTHON.md)
PACKAGES+=(python3-dev pybind11-dev)

# the tests' third-party JSON Schema validator (advplan schema, docs/LLM.md)
PACKAGES+=(python3-jsonschema)

# the report's chart, map and graph-layout libraries, compiled into the binary (docs/REPORT.md)
PACKAGES+=(libjs-d3 libjs-leaflet node-dagre-layout)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages (this takes a few minutes): ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  # -q: one line per package fetched, unpacked and set up, without progress bars.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages are installed" >&2
fi

jobs="$(nproc)"
echo "setup: configuring build/" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release --log-level=WARNING "$@"
echo "setup: building build/advplan with ${jobs} job(s) (a few minutes on two cores the first time)" >&2
cmake --build build -j"${jobs}" --target advplan
echo "setup: built build/advplan ($(build/advplan --version))" >&2
